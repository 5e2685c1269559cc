// Oracles that replay a history's admissions into the reference model.
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "judge/oracles.h"
#include "judge/oracles_internal.h"
#include "model/reference_model.h"

namespace ratelab {

namespace {

// The order a replay takes a history's requests in: as they were sent, or as the store took
// them (their last step), which a retry after NOSCRIPT or a slow node can make another.
enum class ReplayOrder { kInvoke, kStore };

bool StoreOrder(const HistoryEvent* a, const HistoryEvent* b) {
  const Instant at_a = a->steps.empty() ? a->invoke : a->steps.back().at;
  const Instant at_b = b->steps.empty() ? b->invoke : b->steps.back().at;
  return at_a != at_b ? at_a < at_b : a->id < b->id;
}

// A denial a replay flagged: the event and what the judge said of it.
struct Flagged {
  const HistoryEvent* event;
  std::string why;
};

// Replays `h` into the reference model of `policy`, calling `judge(event, model_decision)` for
// each denial with the model holding exactly the admissions applied before it, and returns the
// denials `judge` flags, every one (or, with `first_only`, the first per key), in `order`. The
// model decides each at its `invoke` instant whatever the order (one earlier than its key's
// latest admission, at that admission's: reference_model.h).
// `lenient` gives denials every benefit of the doubt (for "no false denials"): a request that
// got no answer but whose steps reached the store counts as admitted unless `passed_over` says it
// was not (it may have consumed; a crash took its answer), and a denial concurrent with an
// admission of its key is not judged.
template <typename Judge, typename PassedOver>
std::vector<Flagged> Replay(const History& h, const Policy& policy, bool lenient, bool first_only,
                            Judge& judge, PassedOver passed_over,
                            ReplayOrder order = ReplayOrder::kInvoke) {
  std::vector<Flagged> out;
  std::unique_ptr<ReferenceModel> model = MakeReferenceModel(policy);
  std::unordered_set<std::string_view> reported;
  std::vector<const HistoryEvent*> events;
  for (const HistoryEvent& e : h) {
    if (e.decision || (lenient && !e.steps.empty() && !passed_over(e))) events.push_back(&e);
  }
  std::stable_sort(events.begin(), events.end(), internal::InvokeOrder);
  // Which of two concurrent requests the store took first is the store's order, not invoke's.
  std::unordered_map<std::string_view, std::vector<const HistoryEvent*>> admitted;
  // An unanswered request's effect on the store came no later than its last step.
  const auto end = [](const HistoryEvent* e) {
    return e->decision ? e->complete : e->steps.back().at;
  };
  Duration longest{};
  if (lenient) {
    for (const HistoryEvent* e : events) {
      if (e->denied()) continue;
      admitted[e->key].push_back(e);
      longest = std::max(longest, end(e) - e->invoke);
    }
  }
  if (order == ReplayOrder::kStore) std::stable_sort(events.begin(), events.end(), StoreOrder);
  const auto overlaps_an_admission = [&](const HistoryEvent& d) {
    auto it = admitted.find(d.key);
    if (it == admitted.end()) return false;
    const std::vector<const HistoryEvent*>& a = it->second;  // in invoke order
    auto hi = std::upper_bound(a.begin(), a.end(), d.complete,
                               [](Instant t, const HistoryEvent* f) { return t < f->invoke; });
    while (hi != a.begin()) {
      const HistoryEvent* f = *--hi;
      if (f->invoke < d.invoke - longest) break;
      if (f != &d && end(f) >= d.invoke) return true;
    }
    return false;
  };
  // Keys with a request lost before: it may have held a pacer's slot until an unknown instant.
  std::unordered_set<std::string_view> lost;
  for (const HistoryEvent* e : events) {
    if (!e->decision) lost.insert(e->key);
    if (!e->decision || e->decision->allowed) {
      // An admission made to wait: judged against the least wait the model needed, from the
      // instant it was decided (its forwarding's less the wait) to the first the model has room.
      if (e->decision && e->decision->wait > Duration(0) && !lost.contains(e->key) &&
          !(first_only && reported.contains(e->key)) && !(lenient && overlaps_an_admission(*e))) {
        const Instant decided = e->invoke - e->decision->wait;
        Decision expected;
        expected.allowed = model->Peek(e->key, e->invoke, e->cost).allowed;
        if (expected.allowed && !model->Peek(e->key, decided, e->cost).allowed) {
          Instant lo = decided, hi = e->invoke;  // no room at lo, room at hi
          while (hi - lo > Duration(1)) {
            const Instant mid = lo + (hi - lo) / 2;
            (model->Peek(e->key, mid, e->cost).allowed ? hi : lo) = mid;
          }
          expected.wait = hi - decided;
        }
        if (std::optional<std::string> why = judge(*e, expected)) {
          out.push_back({e, *std::move(why)});
          reported.insert(e->key);
        }
      }
      model->Admit(e->key, e->invoke, e->cost);
      continue;
    }
    if (first_only && reported.contains(e->key)) continue;
    if (lenient && overlaps_an_admission(*e)) continue;
    const Decision expected = model->Peek(e->key, e->invoke, e->cost);
    if (std::optional<std::string> why = judge(*e, expected)) {
      out.push_back({e, *std::move(why)});
      reported.insert(e->key);
    }
  }
  return out;
}

// The denials a replay (`lenient` or not) flags, every one, in the order sent. A store that took
// requests in another order than they were sent decided each on the state it had then: a late
// request consumed after a newer one (evaluated at the newer one's instant), and every decision
// after followed from that (an anchored window opened by whichever the store took first). A
// denial is flagged only when the judge flags it in both orders.
template <typename Judge, typename PassedOver>
std::vector<Flagged> FlaggedInBothOrders(const History& h, const Policy& policy, Judge& judge,
                                         PassedOver passed_over, bool lenient = true) {
  std::vector<Flagged> sent = Replay(h, policy, lenient, false, judge, passed_over);
  if (sent.empty()) return sent;
  std::unordered_set<int64_t> in_store_order;
  for (const Flagged& f :
       Replay(h, policy, lenient, false, judge, passed_over, ReplayOrder::kStore)) {
    in_store_order.insert(f.event->id);
  }
  std::erase_if(sent, [&](const Flagged& f) { return !in_store_order.contains(f.event->id); });
  return sent;
}

template <typename Judge>
std::vector<Flagged> FlaggedInBothOrders(const History& h, const Policy& policy, Judge& judge) {
  return FlaggedInBothOrders(h, policy, judge, [](const HistoryEvent&) { return false; });
}

// At most this many lost requests of one key are tried every way (2^N replays); a key with more
// is not judged leniently.
constexpr size_t kMostChoices = 8;

// For "no false denials" when an admission can make a later denial less justified (an anchored
// window: a lost request that opened a window earlier closes it earlier): a denial is flagged
// only when it is under every choice of which of its key's lost requests were admitted.
template <typename Judge>
std::vector<Violation> ReplayEveryChoice(const History& h, const Policy& policy, Judge& judge) {
  std::map<std::string_view, std::vector<const HistoryEvent*>> lost;  // by key
  for (const HistoryEvent& e : h) {
    if (e.maybe_admitted()) lost[e.key].push_back(&e);
  }
  std::vector<Violation> out;
  std::unordered_set<std::string_view> reported;
  for (const Flagged& f : FlaggedInBothOrders(h, policy, judge)) {
    if (!reported.insert(f.event->key).second) continue;
    const auto it = lost.find(f.event->key);
    if (it == lost.end()) {
      out.push_back({CheckId::kFalseDenials, f.event->key, f.why, {*f.event}});
      continue;
    }
    const std::vector<const HistoryEvent*>& maybe = it->second;
    if (maybe.size() > kMostChoices) continue;
    History key_history;
    for (const HistoryEvent& e : h) {
      if (e.key == f.event->key) key_history.push_back(e);
    }
    // Flagged under every choice: the first denial that is.
    std::optional<std::map<int64_t, std::string>> every;
    for (uint32_t mask = 0; mask < (1u << maybe.size()); ++mask) {
      const auto passed_over = [&](const HistoryEvent& e) {
        for (size_t j = 0; j < maybe.size(); ++j) {
          if (maybe[j]->id == e.id) return (mask & (1u << j)) == 0;
        }
        return false;
      };
      std::map<int64_t, std::string> flagged;
      for (Flagged& g : FlaggedInBothOrders(key_history, policy, judge, passed_over)) {
        if (!every || every->contains(g.event->id)) flagged[g.event->id] = std::move(g.why);
      }
      every = std::move(flagged);
      if (every->empty()) break;
    }
    for (const HistoryEvent& e : key_history) {
      if (every->contains(e.id)) {
        out.push_back({CheckId::kFalseDenials, e.key, every->at(e.id), {e}});
        break;
      }
    }
  }
  return out;
}

// Whether an admission can anchor windows (the anchored window, the anchored counter's grid), and
// so make a later denial less justified.
bool AdmissionsAnchor(const Policy& policy) {
  return policy.algorithm == Algorithm::kAnchoredWindow ||
         policy.algorithm == Algorithm::kAnchoredWindowHalfOpen || policy.AnchoredCounter();
}

template <typename Judge>
std::vector<Violation> ReplayDenials(const History& h, const Policy& policy, bool lenient,
                                     Judge judge) {
  if (lenient && AdmissionsAnchor(policy)) return ReplayEveryChoice(h, policy, judge);
  const auto none = [](const HistoryEvent&) { return false; };
  std::vector<Violation> out;
  std::unordered_set<std::string_view> reported;
  for (const Flagged& f : FlaggedInBothOrders(h, policy, judge, none, lenient)) {
    if (reported.contains(f.event->key)) continue;
    reported.insert(f.event->key);
    out.push_back({CheckId::kFalseDenials, f.event->key, f.why, {*f.event}});
  }
  return out;
}

}  // namespace

std::vector<Violation> CheckFalseDenials(const History& h, const Policy& policy,
                                         Duration wait_tolerance) {
  std::vector<Violation> out = ReplayDenials(
      h, policy, /*lenient=*/true,
      [&](const HistoryEvent& e, const Decision& expected) -> std::optional<std::string> {
        if (!expected.allowed) return std::nullopt;
        if (e.admitted()) {  // made to wait
          const Duration waited = e.decision->wait;
          if (waited - expected.wait <= wait_tolerance) return std::nullopt;
          return "made to wait " + FormatDuration(waited) + " at " +
                 FormatInstantTo(e.invoke - waited, 3) + " although " + policy.ToString() +
                 " had room for it after " + FormatDuration(expected.wait) + ": " +
                 FormatDuration(waited - expected.wait) + " longer than needed";
        }
        const std::string room = CreditOf(policy) == BucketCredit::kOneToken
                                     ? "a token left, which admits this request of cost " +
                                           std::to_string(e.cost) + " on credit"
                                     : std::to_string(expected.remaining + e.cost) +
                                           " left before this request of cost " +
                                           std::to_string(e.cost);
        return "denied at " + FormatInstantTo(e.invoke, 3) + " although " + policy.ToString() +
               " had room (" + room + ")";
      });
  for (Violation& v : out) v.invariant = CheckId::kFalseDenials;
  return out;
}

std::optional<Violation> LongestFalseDenialStreak(const History& h, const Policy& policy) {
  const auto has_room = [](const HistoryEvent&, const Decision& expected) {
    return expected.allowed ? std::optional<std::string>("") : std::nullopt;
  };
  // As CheckFalseDenials flags them.
  std::unordered_set<int64_t> flagged;
  for (const Flagged& f : FlaggedInBothOrders(h, policy, has_room)) flagged.insert(f.event->id);
  // Where an admission can anchor windows, a lost request may have anchored them otherwise:
  // such keys are not judged (as CheckFalseDenials judges them under every choice).
  const bool anchored = AdmissionsAnchor(policy);
  std::unordered_set<std::string_view> unsure;
  for (const HistoryEvent& e : h) {
    if (anchored && e.maybe_admitted()) unsure.insert(e.key);
  }
  std::vector<const HistoryEvent*> longest, run;
  std::string_view key;
  for (const HistoryEvent* e : ByKeyInInvokeOrder(h)) {
    if (e->key != key) {
      run.clear();
      key = e->key;
    }
    if (!e->decision) continue;  // unanswered: neither breaks a streak nor adds to one
    if (e->denied() && flagged.contains(e->id) && !unsure.contains(e->key)) {
      run.push_back(e);
      if (run.size() > longest.size()) longest = run;
    } else {
      run.clear();
    }
  }
  if (longest.empty()) return std::nullopt;
  Violation v{CheckId::kFalseDenials,
              longest.front()->key,
              std::to_string(longest.size()) + " denial(s) in a row from " +
                  FormatInstantTo(longest.front()->invoke, 3) + " to " +
                  FormatInstantTo(longest.back()->invoke, 3) + ", each of which " +
                  policy.ToString() + " had room for",
              {}};
  for (const HistoryEvent* e : longest) v.witness.push_back(*e);
  return v;
}

std::vector<Violation> CheckRetryAfter(const History& h, const Policy& policy, Duration unit,
                                       Duration resolution) {
  std::vector<Violation> out = ReplayDenials(
      h, policy, /*lenient=*/false,
      [&](const HistoryEvent& e, const Decision& expected) -> std::optional<std::string> {
        if (expected.allowed) return std::nullopt;
        // The exact wait, rounded up to the unit the limiter answers in.
        const Duration wait = expected.retry_after == kNever || unit <= Duration(1)
                                  ? expected.retry_after
                                  : ((expected.retry_after + unit - Duration(1)) / unit) * unit;
        if (wait == e.decision->retry_after) return std::nullopt;
        // Closer than the limiter can tell: the same wait.
        if (wait != kNever && e.decision->retry_after != kNever &&
            std::chrono::abs(e.decision->retry_after - wait) < resolution) {
          return std::nullopt;
        }
        std::string what = "denied at " + FormatInstantTo(e.invoke, 3) + " with retry after " +
                           FormatDuration(e.decision->retry_after) + "; the exact wait under " +
                           policy.ToString() + " is " + FormatDuration(expected.retry_after);
        if (wait != expected.retry_after) what += ", " + FormatDuration(wait) + " rounded up";
        return what;
      });
  for (Violation& v : out) v.invariant = CheckId::kRetryAfter;
  return out;
}

}  // namespace ratelab
