#include <algorithm>

#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

Decision TokenBucketIntervals::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  // Refill on a copy: a denial changes nothing.
  State r = s;
  if (r.last == kUnseen) {
    r = {burst_, t};
  } else if (t > r.last) {
    const int64_t intervals = (t - r.last) / interval_;
    // Compared before adding, so a long gap at a tiny interval cannot overflow.
    if (intervals > 0) r = {intervals >= burst_ - r.tokens ? burst_ : r.tokens + intervals, t};
  }
  Decision d{.limit = burst_, .remaining = r.tokens};
  if (cost <= burst_ && r.tokens >= cost) {
    r.tokens -= cost;
    s = r;
    d.allowed = true;
    d.remaining = r.tokens;
  } else {
    // A denial keeps no refill: the wait counts from the state as it was.
    d.retry_after = cost > burst_ ? kNever : Duration(s.last + (cost - s.tokens) * interval_ - t);
  }
  const State& kept = s.last == kUnseen ? r : s;  // a key never seen: as it would start
  d.reset = FromUnixNanos(kept.last + (burst_ - kept.tokens) * interval_);
  return d;
}

}  // namespace ratelab::internal
