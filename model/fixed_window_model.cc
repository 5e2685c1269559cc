#include "model/fixed_window_model.h"

#include <algorithm>

namespace ratelab {

FixedWindowModel FixedWindowModel::At(const Policy& p, Instant now) const {
  const int64_t index = std::max(AlignedWindowIndex(now, p.window), window_index);
  if (index == window_index) return *this;
  return FixedWindowModel{index, 0};
}

Decision FixedWindowModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const FixedWindowModel s = At(p, now);
  const Instant window_end = AlignedWindowStart(s.window_index + 1, p.window);
  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && s.count <= p.limit - cost;
  d.remaining = std::max<int64_t>(0, p.limit - s.count - (d.allowed ? cost : 0));
  d.reset = window_end;
  if (!d.allowed) d.retry_after = cost > p.limit ? kNever : window_end - now;
  return d;
}

void FixedWindowModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  count += cost;
}

}  // namespace ratelab
