#include "model/fixed_window_model.h"

#include <algorithm>

namespace ratelab {

FixedWindowModel FixedWindowModel::At(const Policy& p, Instant now) const {
  const int64_t index = std::max(AlignedWindowIndex(now, p.window), window_index);
  if (index == window_index) return *this;
  return FixedWindowModel{index, 0};
}

Decision CountedWindowDecision(const Policy& p, int64_t count, Instant next, Instant now,
                               int64_t cost) {
  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && count <= p.limit - cost;
  d.remaining = std::max<int64_t>(0, p.limit - count - (d.allowed ? cost : 0));
  d.reset = next;
  if (!d.allowed) d.retry_after = cost > p.limit ? kNever : next - now;
  return d;
}

Decision FixedWindowModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const FixedWindowModel s = At(p, now);
  return CountedWindowDecision(p, s.count, AlignedWindowStart(s.window_index + 1, p.window), now,
                               cost);
}

void FixedWindowModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  count += cost;
}

}  // namespace ratelab
