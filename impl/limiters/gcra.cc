#include <algorithm>

#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

Decision Gcra::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  const int64_t base = std::max(s.tat, t);
  Decision d{.limit = burst_};
  if (cost <= burst_ && base + cost * interval_ - t <= tolerance_) {
    s.tat = base + cost * interval_;
    d.allowed = true;
  } else {
    d.retry_after = cost > burst_ ? kNever : Duration(base + cost * interval_ - t - tolerance_);
  }
  const int64_t after = d.allowed ? s.tat : base;
  d.remaining = std::max<int64_t>(0, tolerance_ - (after - t)) / interval_;
  d.reset = FromUnixNanos(after);
  return d;
}

}  // namespace ratelab::internal
