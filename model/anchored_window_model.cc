#include "model/anchored_window_model.h"

#include <algorithm>

namespace ratelab {

AnchoredWindowModel AnchoredWindowModel::At(const Policy& p, Instant now) const {
  if (start && now <= *start + p.window) return *this;
  return AnchoredWindowModel{now, 0};
}

Decision AnchoredWindowModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const AnchoredWindowModel s = At(p, now);
  // The first instant after the window: a request then opens a new one.
  const Instant next = *s.start + p.window + Duration(1);
  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && s.count <= p.limit - cost;
  d.remaining = std::max<int64_t>(0, p.limit - s.count - (d.allowed ? cost : 0));
  d.reset = next;
  if (!d.allowed) d.retry_after = cost > p.limit ? kNever : next - now;
  return d;
}

void AnchoredWindowModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  count += cost;
}

}  // namespace ratelab
