// The promise judged on histories of real concurrency, where each decision took effect at an
// unknown instant of [invoke, complete]. A set of admissions is a breach only when every one of
// them was answered inside the span it is counted in: then wherever the decisions fell, they
// fell inside it.
#include <algorithm>
#include <set>

#include "judge/oracles.h"
#include "judge/oracles_internal.h"
#include "model/sliding_log_model.h"

namespace ratelab {

namespace {

using Events = std::vector<const HistoryEvent*>;

bool CompleteOrder(const HistoryEvent* a, const HistoryEvent* b) {
  return a->complete != b->complete ? a->complete < b->complete : a->id < b->id;
}

// The fewest of `inside` (the earliest answered first) that hold more than `bound(span)` units,
// where span runs from the earliest invoke to the latest complete among them; empty if none do.
template <typename Bound>
Events FirstBreach(Events inside, Bound bound) {
  if (!std::is_sorted(inside.begin(), inside.end(), CompleteOrder)) {
    std::sort(inside.begin(), inside.end(), CompleteOrder);
  }
  int64_t used = 0;
  Instant first_invoke = Instant::max();
  for (size_t n = 0; n < inside.size(); ++n) {
    used += inside[n]->cost;
    first_invoke = std::min(first_invoke, inside[n]->invoke);
    if (used > bound(inside[n]->complete - first_invoke)) {
      inside.resize(n + 1);
      std::sort(inside.begin(), inside.end(), internal::InvokeOrder);
      return inside;
    }
  }
  return {};
}

Violation Report(CheckId invariant, std::string_view key, const Events& witness,
                 const std::string& bound) {
  int64_t used = 0;
  Instant from = Instant::max(), to = Instant::min();
  for (const HistoryEvent* e : witness) {
    used += e->cost;
    from = std::min(from, e->invoke);
    to = std::max(to, e->complete);
  }
  return {invariant, std::string(key),
          std::to_string(used) + " admitted, each sent and answered within [" +
              FormatInstantTo(from, 6) + ", " + FormatInstantTo(to, 6) + "] (span " +
              FormatDurationTo(to - from, 6) + "), " + bound,
          internal::Copy(witness, 0, witness.size()), Violation::Window{from, to, true, true}};
}

std::vector<Violation> AlignedWindows(const History& h, int64_t limit, Duration window,
                                      const WindowOffset& offset) {
  std::vector<Violation> out;
  const std::string bound = "all in one aligned window, limit " + std::to_string(limit) + " per " +
                            FormatDuration(window);
  for (const auto& [key, events] : internal::GroupByKey(h, internal::Admitted)) {
    const Duration shift = offset ? offset.of(key) : Duration(0);
    const auto index_of = [&](Instant t) { return AlignedWindowIndex(t - shift, window); };
    for (size_t i = 0; i < events.size();) {
      const int64_t index = index_of(events[i]->invoke);
      Events inside;
      for (; i < events.size() && index_of(events[i]->invoke) == index; ++i) {
        if (index_of(events[i]->complete) == index) inside.push_back(events[i]);
      }
      Events witness = FirstBreach(std::move(inside), [&](Duration) { return limit; });
      if (!witness.empty()) {
        out.push_back(Report(PromiseInvariant(Algorithm::kFixedWindow), key, witness, bound));
        const Instant start = AlignedWindowStart(index, window) + shift;
        out.back().window = Violation::Window{start, start + window};
        break;
      }
    }
  }
  return out;
}

// For each first invoke s, the admissions sent at or after s and answered by s + reach; a breach
// is what `bound` refuses for the span they cover.
template <typename Bound>
std::vector<Violation> Spans(const History& h, CheckId invariant, Duration reach,
                             const std::string& words, Bound bound) {
  std::vector<Violation> out;
  for (const auto& [key, events] : internal::GroupByKey(h, internal::Admitted)) {
    size_t hi = 0;     // the first event sent after `end`
    int64_t sent = 0;  // units of the events in [i, hi)
    for (size_t i = 0; i < events.size(); ++i) {
      const Instant end = events[i]->invoke + reach;
      while (hi < events.size() && events[hi]->invoke <= end) sent += events[hi++]->cost;
      if (i > 0) sent -= events[i - 1]->cost;
      // Every set to judge is among these: if they are too few for the least the bound allows,
      // none breaks it (the usual case, at O(1)).
      if (sent <= bound(Duration(0))) continue;
      Events inside;
      for (size_t j = i; j < events.size() && events[j]->invoke <= end; ++j) {
        if (events[j]->complete <= end) inside.push_back(events[j]);
      }
      Events witness = FirstBreach(std::move(inside), bound);
      if (!witness.empty()) {
        out.push_back(Report(invariant, key, witness, words));
        break;
      }
    }
  }
  return out;
}

// An anchored window opens at the first admission after the last window closed. At a key's first
// request, or after a quiet spell in which every window that may have opened has closed (every
// earlier admission, or request that may have been one, answered more than W before the next was
// sent), the next window opens no earlier than that next request was sent, at `m`, and so runs at
// least through m + W: every admission sent since and answered by then is in that one window,
// wherever each decision fell. More of them than the limit break the promise itself.
std::vector<Violation> AnchoredFromAQuietStart(const History& h, int64_t limit, Duration window,
                                               bool fresh) {
  std::vector<Violation> out;
  const std::string bound =
      "all in the one window the first of them opened (the key quiet before "
      "them), limit " +
      std::to_string(limit) + " per " + FormatDuration(window);
  const auto may_count = [](const HistoryEvent& e) { return e.admitted() || e.unanswered(); };
  for (const auto& [key, grouped] : internal::GroupByKey(h, may_count)) {
    Events events(grouped.begin(), grouped.end());
    std::stable_sort(events.begin(), events.end(), internal::InvokeOrder);
    // The latest instant a window opened by the requests before may still be open: one opened
    // before the history, unseen, closes within W of its start (of the key's first request).
    Instant open_until = fresh ? Instant::min() : events.front()->invoke + window;
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i]->invoke > open_until) {
        const Instant end = events[i]->invoke + window;
        Events inside;
        int64_t used = 0;
        for (size_t j = i; j < events.size() && events[j]->invoke <= end; ++j) {
          if (events[j]->admitted() && events[j]->complete <= end) {
            inside.push_back(events[j]);
            used += events[j]->cost;
          }
        }
        if (used > limit) {
          out.push_back(Report(PromiseInvariant(Algorithm::kAnchoredWindow), key,
                               FirstBreach(std::move(inside), [&](Duration) { return limit; }),
                               bound));
          break;  // the first of each key
        }
      }
      // One with no answer may have been admitted at any instant since it was sent.
      const Instant answered = events[i]->admitted() ? events[i]->complete : Instant::max();
      open_until = std::max(
          open_until, answered >= Instant::max() - window ? Instant::max() : answered + window);
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<Violation>> CheckPromiseOverIntervals(const History& h,
                                                                const Policy& policy,
                                                                Duration horizon, bool fresh) {
  const int64_t limit = policy.limit;
  const Duration window = policy.window;
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      return AlignedWindows(h, limit, window, policy.offset);
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      // A span shorter than W (at most W when closed): answered before s + W, so by s + W - 1ns.
      return Spans(h, PromiseInvariant(policy.algorithm), SlidingLogReach(policy) - Duration(1),
                   "limit " + std::to_string(limit) + " in any " + FormatDuration(window),
                   [&](Duration) { return limit; });
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
    case Algorithm::kTokenBucketIntervals:
    case Algorithm::kTokenBucketCredit: {
      // On credit, a span's last admission may take what the bucket lacks: the costliest
      // admission's cost less the one token it needs.
      int64_t owed = 0;
      if (CreditOf(policy) == BucketCredit::kOneToken) {
        for (const HistoryEvent& e : h) {
          if (e.admitted()) owed = std::max(owed, e.cost - 1);
        }
      }
      std::vector<Violation> out = Spans(
          h, PromiseInvariant(policy.algorithm), horizon,
          "bucket allows at most " + std::to_string(limit) + " + span / " + FormatDuration(window) +
              (owed > 0 ? " + " + std::to_string(owed) + " on credit" : ""),
          [&](Duration span) { return policy.BucketBound(span) + owed; });
      for (Violation& v : out) v.bucket = Violation::Bucket{limit, window};
      return out;
    }
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen: {
      // The one window a quiet key's next admission opens (through its last instant); past that,
      // windows open at least W apart, so any span of W (closed) meets at most two: 2N.
      std::vector<Violation> out = AnchoredFromAQuietStart(h, limit, policy.AnchoredReach(), fresh);
      std::set<std::string_view> found;
      for (const Violation& v : out) found.insert(v.key);
      for (Violation& v :
           Spans(h, PromiseInvariant(policy.algorithm), window,
                 "limit " + std::to_string(limit) + " per " + FormatDuration(window) +
                     " allows at most " + std::to_string(2 * limit) +
                     " in any span of that length (two anchored windows)",
                 [&](Duration) { return 2 * limit; })) {
        if (!found.contains(v.key)) out.push_back(std::move(v));
      }
      return out;
    }
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      // Windows open at least W apart, so any span of W (closed) meets at most two: 2N.
      return Spans(h, PromiseInvariant(policy.algorithm), window,
                   "limit " + std::to_string(limit) + " per " + FormatDuration(window) +
                       " allows at most " + std::to_string(2 * limit) +
                       " in any span of that length (two anchored windows)",
                   [&](Duration) { return 2 * limit; });
  }
  return std::nullopt;
}

int64_t MostAdmittedBetween(const Policy& policy, Instant from, Instant to) {
  const Duration span = to - from;
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      // Windows offset per key (where, this does not know) meet a span in at most this many:
      // one, and one more for each edge in (from, to].
      if (policy.offset) {
        return policy.limit *
               (span / policy.window + 1 + (span % policy.window != Duration(0) ? 1 : 0));
      }
      return policy.limit *
             (AlignedWindowIndex(to, policy.window) - AlignedWindowIndex(from, policy.window) + 1);
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      // [from, to] is covered by this many half-open spans of W (W and a tick when closed),
      // each holding at most N.
      return policy.limit * (span.count() / SlidingLogReach(policy).count() + 1);
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
    case Algorithm::kTokenBucketIntervals:
    case Algorithm::kTokenBucketCredit:  // requests of cost 1, as stress sends
      return policy.BucketBound(span);
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen:
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return -1;
  }
  return -1;
}

}  // namespace ratelab
