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
  const int64_t need = cost <= burst_ ? cost * interval_ : 0;
  if (cost <= burst_ && r.level >= need) {
    r.level -= need;
    s = r;
    d.allowed = true;
  } else {
    d.retry_after = cost > burst_ ? kNever : Duration(r.last + need - r.level - t);
  }
  d.remaining = r.level / interval_;
  d.reset = FromUnixNanos(r.last + full_ - r.level);
  return d;
}

}  // namespace ratelab::internal
