#include "model/token_bucket_intervals_model.h"

#include <algorithm>

namespace ratelab {

TokenBucketIntervalsModel TokenBucketIntervalsModel::At(const Policy& p, Instant now) const {
  if (!seen) return TokenBucketIntervalsModel{true, p.limit, now};
  const Instant eff = std::max(now, last);
  const int64_t intervals = (eff - last).count() / p.window.count();
  if (intervals == 0) return *this;
  // Compared before adding, so a long gap at a tiny interval cannot overflow.
  const int64_t refilled = intervals >= p.limit - tokens ? p.limit : tokens + intervals;
  return TokenBucketIntervalsModel{true, refilled, eff};
}

Decision TokenBucketIntervalsModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const TokenBucketIntervalsModel s = At(p, now);
  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && s.tokens >= cost;
  d.remaining = std::max<int64_t>(0, s.tokens - (d.allowed ? cost : 0));
  // A denial keeps no refill, so what follows one counts from the state as it was.
  const TokenBucketIntervalsModel& kept = d.allowed || !seen ? s : *this;
  const int64_t tokens = d.allowed ? s.tokens - cost : kept.tokens;
  d.reset = kept.last + (p.limit - tokens) * p.window;
  if (!d.allowed) {
    d.retry_after = cost > p.limit ? kNever : kept.last + (cost - tokens) * p.window - now;
  }
  return d;
}

void TokenBucketIntervalsModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  tokens -= cost;
}

}  // namespace ratelab
