#include "model/token_bucket_model.h"

#include <algorithm>

namespace ratelab {

TokenBucketModel TokenBucketModel::At(const Policy& p, Instant now) const {
  const Int128 full = Int128{p.limit} * p.window.count();
  if (!seen) return TokenBucketModel{true, full, now};
  const Instant eff = std::max(now, last);
  return TokenBucketModel{true, std::min(full, level + (eff - last).count()), eff};
}

Decision TokenBucketModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const TokenBucketModel s = At(p, now);
  const Int128 full = Int128{p.limit} * p.window.count();
  const Int128 cost_level = Int128{cost} * p.window.count();
  // On credit, one token admits any cost; the rest is owed.
  const bool credit = CreditOf(p) == BucketCredit::kOneToken;
  const Int128 need = credit ? Int128{p.window.count()} : cost_level;
  Decision d;
  d.limit = p.limit;
  d.allowed = (credit || cost <= p.limit) && s.level >= need;
  const Int128 after = s.level - (d.allowed ? cost_level : 0);
  d.remaining = after <= 0 ? 0 : static_cast<int64_t>(after / p.window.count());
  d.reset = s.last + Duration(static_cast<int64_t>(full - after));
  if (!d.allowed) {
    d.retry_after = !credit && cost > p.limit
                        ? kNever
                        : s.last + Duration(static_cast<int64_t>(need - s.level)) - now;
  }
  return d;
}

void TokenBucketModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  level -= Int128{cost} * p.window.count();
}

void TokenBucketModel::Forget(const Policy& p, Instant now) {
  if (seen) *this = At(p, now);
}

}  // namespace ratelab
