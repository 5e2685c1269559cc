#include <algorithm>

#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

Decision TokenBucket::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  // Refill on a copy: a denial changes nothing.
  State r = s;
  if (r.last == kUnseen) {
    r = {full_, t};
  } else if (t > r.last) {
    const int64_t gained = t - r.last;
    r.level = gained >= full_ - r.level ? full_ : r.level + gained;
    r.last = t;
  }
  Decision d{.limit = burst_};
  const bool fits = credit_ || cost <= burst_;
  const int64_t need = !fits ? 0 : credit_ ? interval_ : cost * interval_;
  if (fits && r.level >= need) {
    // On credit the debt may be any size: kept within reach of int64 (2^62 ns is 146 years).
    constexpr Int128 kDeepest = -(Int128{1} << 62);
    r.level = static_cast<int64_t>(std::max(kDeepest, Int128{r.level} - Int128{cost} * interval_));
    s = r;
    d.allowed = true;
  } else {
    d.retry_after = !fits ? kNever : Duration(r.last + need - r.level - t);
  }
  d.remaining = std::max<int64_t>(0, r.level / interval_);
  d.reset = FromUnixNanos(r.last + full_ - r.level);
  return d;
}

}  // namespace ratelab::internal
