#include "judge/checks.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_split.h"
#include "model/named.h"
#include "model/reference_model.h"

namespace ratelab {

namespace {

using Violations = Result<std::vector<Violation>>;

Violations Promise(const Judged& r) { return CheckPromise(r.history, r.policy, r.tie); }

Violations AlignedWindowCap(const Judged& r) {
  return CheckAlignedWindowCap(r.history, r.claim_limit, r.claim_window, r.policy.offset);
}

Violations AnchoredWindowCap(const Judged& r) {
  return CheckAnchoredWindowCap(
      r.history, r.claim_limit, r.claim_window,
      r.tie > Duration(1) || r.policy.algorithm == Algorithm::kAnchoredWindowHalfOpen
          ? WindowEdge::kHalfOpen
          : WindowEdge::kClosed);
}

Violations AnyWindowCap(const Judged& r) { return r.any_window.violations; }

Violations BucketConformance(const Judged& r) {
  if (!r.policy.IsBucket()) return std::vector<Violation>{};
  return CheckBucketConformance(r.history, r.policy.limit, r.policy.window, CreditOf(r.policy));
}

// Whether two requests of `key` sent up to `until` were sent exactly `window` apart in `exact`:
// the one tie at a coarser resolution that the floor did not make.
bool ExactlyAWindowApart(const History& exact, std::string_view key, Instant until,
                         Duration window) {
  std::set<Instant> sent;
  for (const HistoryEvent& e : exact) {
    if (e.key == key && e.invoke <= until) sent.insert(e.invoke);
  }
  return std::any_of(sent.begin(), sent.end(),
                     [&](Instant t) { return sent.contains(t + window); });
}

}  // namespace

std::optional<Policy> TiePolicy(const Policy& policy, Duration resolution) {
  const Algorithm a = policy.algorithm;
  const bool closed = a == Algorithm::kAnchoredWindow || a == Algorithm::kSlidingLogClosed;
  if (resolution <= Duration(1) || policy.window <= resolution ||
      (!closed && a != Algorithm::kSlidingLog && a != Algorithm::kAnchoredWindowHalfOpen)) {
    return std::nullopt;
  }
  Policy other = policy;
  other.window += closed ? -resolution : resolution;
  return other;
}

namespace {

// The denials `CheckFalseDenials` flags in `history` under `policy`, by id.
std::set<int64_t> FlaggedIds(const History& history, const Policy& policy,
                             Duration wait_tolerance) {
  std::set<int64_t> ids;
  for (const Violation& v : CheckFalseDenials(history, policy, wait_tolerance)) {
    if (!v.witness.empty()) ids.insert(v.witness.front().id);
  }
  return ids;
}

// At a resolution coarser than a nanosecond the instants judged were floored, so two of them a
// whole window apart may have been a little less or a little more: a window (or a log's entry)
// that ends on the edge may have ended just before the later one or just after it. A denial is
// false only if it is so either way: with the window as the model keeps it, and with it one tick
// shorter (a closed window's edge, half open) or longer (a half-open log's, closed); or if two
// requests of its key before it were exactly a window apart, a tie the floor did not make.
// A bucket's token that comes due on the tick of a denial is the same tie: a limiter that counts
// its tokens in floating point, or floors its refill, may find it a hair short. A bucket's denial
// is false only if the model had room a tick before it too.
Violations FalseDenials(const Judged& r) {
  const Duration wait_tolerance = std::max(r.resolution, r.wait_unit);
  std::vector<Violation> flagged = CheckFalseDenials(r.history, r.policy, wait_tolerance);
  if (r.policy.IsBucket()) {
    if (flagged.empty() || r.resolution <= Duration(1)) return flagged;
    History earlier = r.history;
    for (HistoryEvent& e : earlier) {
      if (e.denied()) e.invoke -= r.resolution;
    }
    const std::set<int64_t> also = FlaggedIds(earlier, r.policy, wait_tolerance);
    std::erase_if(flagged, [&](const Violation& v) {
      return v.witness.empty() || !also.contains(v.witness.front().id);
    });
    return flagged;
  }
  const std::optional<Policy> other = TiePolicy(r.policy, r.tie);
  if (flagged.empty() || !other) return flagged;
  const std::set<int64_t> also = FlaggedIds(r.history, *other, wait_tolerance);
  std::optional<History> exact;  // made at the first denial it has to tell
  std::erase_if(flagged, [&](const Violation& v) {
    if (v.witness.empty() || also.contains(v.witness.front().id)) return false;
    if (r.exact == nullptr) return true;
    if (!exact) exact = r.exact();
    for (const HistoryEvent& e : *exact) {
      if (e.id == v.witness.front().id) {
        return !ExactlyAWindowApart(*exact, e.key, e.invoke, r.policy.window);
      }
    }
    return true;
  });
  return flagged;
}

Violations RetryAfter(const Judged& r) {
  return CheckRetryAfter(r.history, r.policy, r.retry_after_unit, r.resolution);
}

// One violation per item without an expiry at the end of the run, witnessed by the requests whose
// steps named it (for a document: named all its string fields).
Violations KeyExpiry(const Judged& r) {
  std::vector<Violation> out;
  for (const NeverFreed& item : r.never_expire) {
    Violation v{CheckId::kKeyExpiry,
                item.name,
                item.name + " has no expiry (" + item.why + "): nothing will ever free it",
                {}};
    const auto names_it = [&](const std::string& label) {
      return std::all_of(item.fields.begin(), item.fields.end(),
                         [&](const std::string& f) { return label.find(f) != std::string::npos; });
    };
    for (const HistoryEvent& e : r.history) {
      if (std::any_of(e.steps.begin(), e.steps.end(),
                      [&](const StepRecord& s) { return names_it(s.label); })) {
        v.witness.push_back(e);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The promise's violations whose witness spans a restart (its first request came before it, its
// last after), for keys whose promise holds when the same run is simulated without its restarts:
// what a restart reset. A violation that happens anyway is not blamed on the restart.
Violations SurvivesRestart(const Judged& r) {
  if (r.restarts.empty()) return std::vector<Violation>{};  // nothing restarted, nothing reset
  Result<History> calm = r.without_restarts();
  if (!calm.ok()) return calm.status();
  std::set<std::string> broken_anyway;
  for (const Violation& v : CheckPromise(*calm, r.policy, r.tie)) {
    broken_anyway.insert(v.key);
  }
  std::vector<Violation> out;
  for (Violation& v : CheckPromise(r.history, r.policy, r.tie)) {
    if (broken_anyway.contains(v.key)) continue;
    Instant first = Instant::max(), last = Instant::min();
    for (const HistoryEvent& e : v.witness) {
      first = std::min(first, e.invoke);
      last = std::max(last, e.invoke);
    }
    for (const FaultWindow& restart : r.restarts) {
      if (first < restart.from && restart.from <= last) {
        v.summary += "; across the restart: " + restart.what;
        v.invariant = CheckId::kSurvivesRestart;
        out.push_back(std::move(v));
        break;
      }
    }
  }
  return out;
}

constexpr std::array<CheckInfo, 9> kChecks = {{
    {CheckId::kPromise, Promise, CheckPromiseOverIntervals, true},
    {CheckId::kAlignedWindowCap, AlignedWindowCap, nullptr, false},
    {CheckId::kAnchoredWindowCap, AnchoredWindowCap, nullptr, false},
    {CheckId::kAnyWindowCap, AnyWindowCap, nullptr, false},
    {CheckId::kBucketConformance, BucketConformance, nullptr, true},
    {CheckId::kFalseDenials, FalseDenials, nullptr, true},
    {CheckId::kRetryAfter, RetryAfter, nullptr, true},
    {CheckId::kKeyExpiry, KeyExpiry, nullptr, false},
    {CheckId::kSurvivesRestart, SurvivesRestart, nullptr, true},
}};

// CheckOf reads the table by position.
constexpr bool InIdOrder() {
  for (size_t i = 0; i < kChecks.size(); ++i) {
    if (static_cast<size_t>(kChecks[i].id) != i) return false;
  }
  return true;
}
static_assert(InIdOrder(), "kChecks must list the checks in CheckId order");

}  // namespace

std::span<const CheckInfo> Checks() { return kChecks; }

bool IsScenarioCheck(CheckId id) { return static_cast<size_t>(id) < kChecks.size(); }

const CheckInfo& CheckOf(CheckId id) { return kChecks[static_cast<size_t>(id)]; }

Result<CheckId> ParseCheck(std::string_view name) {
  const std::optional<CheckId> id = CheckNamed(name);
  if (id && IsScenarioCheck(*id)) return *id;
  std::vector<CheckId> ids;
  for (const CheckInfo& c : kChecks) ids.push_back(c.id);
  return absl::InvalidArgumentError("unknown check '" + std::string(name) + "' (expected one of " +
                                    CheckChoices(ids) +
                                    "; the boundary-burst ratio is always reported)");
}

// Judges `judged` (`history` at the protocol's `resolution`) by the promise over intervals, the
// witnesses showing the events as they were. Racing over-admission shows within a few bucket
// sizes, so spans up to 2B (at least 64) emission intervals are searched, which keeps the search
// near linear in the admissions.
std::vector<Violation> JudgePromiseOverIntervals(const History& history, const History& judged,
                                                 const Policy& policy, Duration tie_at,
                                                 bool fresh) {
  const Duration horizon = std::max<int64_t>(64, 2 * policy.limit) * policy.window;
  // A closed window's edge on the tick of a request may have fallen before it: judged a tick
  // shorter (TiePolicy), as check judges it.
  const std::optional<Policy> tie = TiePolicy(policy, tie_at);
  const Policy& by = tie && tie->window < policy.window ? *tie : policy;
  std::vector<Violation> violations =
      *CheckOf(CheckId::kPromise).judge_over_intervals(judged, by, horizon, fresh);
  for (Violation& v : violations) {
    for (HistoryEvent& e : v.witness) e = history[static_cast<size_t>(e.id)];
  }
  return violations;
}

namespace {

// Whether placing an admission later (never after the request judged) leaves the model less room
// at that request: true of a window, a log, a sliding counter and a bucket; not of a window
// anchored at an admission (a later one can open a later window) or of whole-interval refills.
bool LaterLeavesLessRoom(Algorithm a) {
  return a == Algorithm::kFixedWindow || a == Algorithm::kSlidingLog ||
         a == Algorithm::kSlidingLogClosed || a == Algorithm::kSlidingCounter ||
         a == Algorithm::kTokenBucket || a == Algorithm::kGcra;
}

// Whether `policy`'s model has room for denial `d` at every instant it may have been decided at,
// with every admission of its key that may have come before it (and every request that got no
// answer, which may have been one), each as late as its interval lets it before that instant: the
// least room any order leaves. `admissions` are the key's admitted and unanswered requests, in
// invoke order; `longest`, the longest any took from sent to answered.
//
// On the client's clock a request brings the instant it was sent at, but a model whose time
// never goes back (a log kept in admission order, a bucket's last instant) decides one sent
// earlier and taken later at the later instant it has already seen: a request, and an admission
// that counts against it, may take effect as late as the latest instant of an admission sent
// before it was answered. So the denial is judged at its own instant and at each such later one,
// and each admission placed as late as that lets it.
bool RoomEverywhere(const std::vector<const HistoryEvent*>& admissions, const HistoryEvent& d,
                    const Policy& policy, Duration resolution, DecisionClock clock,
                    Duration longest) {
  const bool client = clock == DecisionClock::kClient;
  // What is more than a window (a bucket: its fill time) before an instant leaves it alone; a
  // bucket starts that far back empty, which leaves it no more room than it had.
  const Duration reach = policy.IsBucket() ? policy.limit * policy.window : 2 * policy.window;
  const auto sent_by = [&](Instant t) {  // the admissions sent at or before t
    return std::upper_bound(admissions.begin(), admissions.end(), t,
                            [](Instant v, const HistoryEvent* a) { return v < a->invoke; });
  };
  const auto first_near = [&](Instant t) {  // the first whose interval may reach t - reach
    return std::lower_bound(admissions.begin(), admissions.end(), t - reach - longest,
                            [](const HistoryEvent* a, Instant v) { return a->invoke < v; });
  };
  // The latest instant of an admission sent by `t` (its own, at least, for one sent by then).
  const auto latest_sent_by = [&](Instant t) {
    const auto it = sent_by(t);
    return it == admissions.begin() ? Instant::min() : (*(it - 1))->invoke;
  };
  std::vector<Instant> at = {d.invoke};
  if (client) {
    for (auto it = sent_by(d.invoke), end = sent_by(d.complete); it != end; ++it) {
      at.push_back((*it)->invoke);
    }
  } else {
    at.push_back(d.complete);
    for (auto it = first_near(d.invoke), end = sent_by(d.complete); it != end; ++it) {
      for (const Instant t : {(*it)->invoke, (*it)->complete}) {
        if (t > d.invoke && t < d.complete) at.push_back(t);
      }
    }
  }
  for (const Instant t : at) {
    std::vector<std::pair<Instant, int64_t>> placed;
    for (auto it = first_near(t), end = sent_by(client ? d.complete : t); it != end; ++it) {
      const HistoryEvent* a = *it;
      // On the client's clock an admission takes effect at the instant it was sent, or at the
      // latest one sent before it was answered (and before this request was) that was taken
      // first; one sent after this request's instant but taken first is counted here, at it
      // (where a window, a log or a bucket counts it at least as much as at its own).
      const Instant answered = a->decision ? std::min(a->complete, d.complete) : d.complete;
      const Instant e = std::min(
          client ? std::max(a->invoke, latest_sent_by(answered)) : (a->decision ? a->complete : t),
          t);
      if (e + reach >= t) placed.push_back({e, a->cost});
    }
    std::sort(placed.begin(), placed.end());
    std::unique_ptr<ReferenceModel> model = MakeReferenceModel(policy);
    if (policy.IsBucket()) model->Admit(d.key, t - reach, policy.limit);
    for (const auto& [e, cost] : placed) model->Admit(d.key, e, cost);
    if (!model->Peek(d.key, t, d.cost).allowed) return false;
    // A bucket's token due on the tick is its tie (as FalseDenials judges it): room a tick before.
    if (policy.IsBucket() && resolution > Duration(1) &&
        !model->Peek(d.key, t - resolution, d.cost).allowed) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool FalseDenialsJudgedOverIntervals(const Policy& policy) {
  return LaterLeavesLessRoom(policy.algorithm);
}

std::vector<Violation> JudgeFalseDenialsOverIntervals(const History& history, const History& judged,
                                                      const Policy& policy, Duration resolution,
                                                      Duration tie_at, DecisionClock clock) {
  if (!LaterLeavesLessRoom(policy.algorithm)) return {};
  const std::optional<Policy> tie = TiePolicy(policy, tie_at);
  std::map<std::string_view, std::vector<const HistoryEvent*>> by_key;
  Duration longest{0};
  for (const HistoryEvent& e : judged) {
    if (e.failed()) continue;
    by_key[e.key].push_back(&e);
    if (e.decision) longest = std::max(longest, e.complete - e.invoke);
  }
  std::vector<Violation> out;
  for (auto& [key, calls] : by_key) {
    std::stable_sort(calls.begin(), calls.end(), [](const HistoryEvent* a, const HistoryEvent* b) {
      return a->invoke < b->invoke;
    });
    std::vector<const HistoryEvent*> admissions;
    for (const HistoryEvent* e : calls) {
      if (!e->denied()) admissions.push_back(e);
    }
    for (const HistoryEvent* d : calls) {
      if (!d->denied() || !RoomEverywhere(admissions, *d, policy, resolution, clock, longest) ||
          (tie && !RoomEverywhere(admissions, *d, *tie, resolution, clock, longest))) {
        continue;
      }
      const HistoryEvent& shown = history[static_cast<size_t>(d->id)];
      out.push_back({CheckId::kFalseDenials,
                     std::string(key),
                     "denied although " + policy.ToString() +
                         " had room wherever in its interval it fell, every admission of its "
                         "key that may have come before it taken as late as its own interval "
                         "lets it: no order explains it",
                     {shown}});
      break;  // the first of each key
    }
  }
  return out;
}

LinearizabilityJudgement JudgeLinearizability(const History& history, const Policy& policy,
                                              Duration resolution, Duration tie_at,
                                              DecisionClock clock,
                                              const std::vector<Violation>& already_broken,
                                              std::optional<int64_t> broken_max_states) {
  LinearizabilityOptions options;
  options.resolution = std::max(resolution, Duration(1));
  if (broken_max_states) options.broken_max_states = *broken_max_states;
  options.instants_follow_order = clock == DecisionClock::kStore;
  // On the client's clock each request carries the instant it was sent at (a history's `invoke`),
  // and decides there.
  options.read_at_send = clock == DecisionClock::kClient;
  for (const Violation& v : already_broken) options.already_broken.insert(v.key);
  // A key no order explains by the model, but one does by its tie at the resolution (TiePolicy:
  // the window a tick shorter or longer), is given the benefit of the doubt, as check gives it:
  // it is judged no more, and the others are searched again. A bucket's tie is a token that
  // comes due on the tick of a denial, which a limiter that counts its tokens in floating point
  // may find a hair short: its key is searched again with its denials a tick earlier (as
  // FalseDenials judges them).
  const std::optional<Policy> tie = TiePolicy(policy, tie_at);
  const bool bucket_tie = policy.IsBucket() && options.resolution > Duration(1);
  const auto at_tie_of = [&](History key) {
    if (tie) return CheckHistoryLinearizable(*tie, key, options);
    for (HistoryEvent& e : key) {
      if (e.denied()) e.invoke -= options.resolution;
    }
    return CheckHistoryLinearizable(policy, key, options);
  };
  std::set<std::string, std::less<>> forgiven;
  History judged;
  const History* of = &history;
  HistoryLinearizability r = CheckHistoryLinearizable(policy, *of, options);
  const int64_t all_keys = r.keys, all_ops = r.ops;  // the forgiven were judged too
  int64_t states = r.states;
  while ((tie || bucket_tie) && r.verdict == LinearVerdict::kNotLinearizable && r.detail.stuck &&
         !forgiven.contains(r.key) && forgiven.size() < 64) {
    History key;
    for (const HistoryEvent& e : *of) {
      if (e.key == r.key) key.push_back(e);
    }
    const HistoryLinearizability at_tie = at_tie_of(std::move(key));
    states += at_tie.states;
    // Forgiven only where an order at the tie was found: a key already broken whose search at
    // the tie ran out found none (its verdict leaves it out, as no "unknown").
    if (at_tie.verdict != LinearVerdict::kLinearizable || at_tie.broken_keys_cut_short > 0) break;
    forgiven.insert(r.key);
    History rest;
    for (const HistoryEvent& e : *of) {
      if (!forgiven.contains(e.key)) rest.push_back(e);
    }
    judged = std::move(rest);
    of = &judged;
    r = CheckHistoryLinearizable(policy, *of, options);
    states += r.states;
  }
  r.keys = all_keys;
  r.ops = all_ops;
  r.states = states;
  LinearizabilityJudgement out{r.verdict, r.keys,         r.ops,
                               r.states,  r.unknown_keys, r.broken_keys_cut_short,
                               "",        std::nullopt};
  // A key whose promise is broken has no order of its calls that is the model's, witness found
  // or not.
  if (r.broken_keys_cut_short > 0 && r.verdict != LinearVerdict::kNotLinearizable) {
    out.verdict = LinearVerdict::kNotLinearizable;
    out.lead = std::to_string(r.broken_keys_cut_short) +
               " key(s) whose promise is broken: no order of their calls is the model's (their "
               "search, kept short, found no witness of its own)";
    return out;
  }
  if (r.verdict == LinearVerdict::kUnknown && r.detail.stuck) {
    out.lead = "key " + r.key + ": the deepest order the search found places " +
               std::to_string(r.detail.order.size()) + " of its " +
               std::to_string(r.events.size()) + " calls, and stops at #" +
               std::to_string(r.events[*r.detail.stuck]->id);
  }
  if (r.verdict != LinearVerdict::kNotLinearizable || !r.detail.stuck) return out;
  constexpr size_t kPrefixShown = 10;
  const std::vector<LinearStep>& prefix = r.detail.order;
  const HistoryEvent& stuck = *r.events[*r.detail.stuck];
  Violation v{CheckId::kLinearizable, r.key, "", {}};
  const bool client = options.read_at_send;
  v.summary =
      std::string(
          "no order of the calls, each taking effect inside its [sent, answered] interval") +
      (client ? " and deciding at the instant it was sent at" : "") +
      ", gives the answers they got: " + std::to_string(prefix.size()) + " of the key's " +
      std::to_string(r.events.size()) +
      " calls can be placed (the longest linearizable prefix; its last " +
      std::to_string(std::min(prefix.size(), kPrefixShown)) + " shown), then #" +
      std::to_string(stuck.id) + ", " + (stuck.admitted() ? "admitted" : "denied") +
      (r.detail.stuck_cannot_follow
           ? ", cannot be: after them the " + policy.ToString() + " model " +
                 (stuck.admitted() ? "denies" : "admits") + " it " +
                 (client ? "at that instant" : "wherever it falls")
           : ", the first of the calls left to be answered, cannot be placed with the calls "
             "after it in any order (" +
                 policy.ToString() + " model)");
  for (size_t i = prefix.size() > kPrefixShown ? prefix.size() - kPrefixShown : 0;
       i < prefix.size(); ++i) {
    v.witness.push_back(*r.events[prefix[i].op]);
  }
  v.witness.push_back(stuck);
  out.violation = std::move(v);
  return out;
}

Result<std::vector<CheckId>> ParseCheckList(std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError("name at least one check (see ratelab list checks)");
  }
  std::vector<CheckId> out;
  for (const std::string& name : std::vector<std::string>(absl::StrSplit(std::string(text), ','))) {
    Result<CheckId> check = ParseCheck(name);
    if (!check.ok()) return check.status();
    out.push_back(*check);
  }
  return out;
}

std::string FormatCheckList(const std::vector<CheckId>& checks) {
  std::string out;
  for (CheckId c : checks) out += (out.empty() ? "" : ",") + std::string(CheckName(c));
  return out;
}

}  // namespace ratelab
