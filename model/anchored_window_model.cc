#include "model/anchored_window_model.h"

#include "model/fixed_window_model.h"

namespace ratelab {

AnchoredWindowModel AnchoredWindowModel::At(const Policy& p, Instant now) const {
  if (start && now <= *start + p.AnchoredReach()) return *this;
  return AnchoredWindowModel{now, 0};
}

Decision AnchoredWindowModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const AnchoredWindowModel s = At(p, now);
  // The first instant after the window: a request then opens a new one.
  return CountedWindowDecision(p, s.count, *s.start + p.AnchoredReach() + Duration(1), now, cost);
}

void AnchoredWindowModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  count += cost;
}

void AnchoredWindowModel::Forget(const Policy& p, Instant now) {
  if (start && now > *start + p.AnchoredReach()) *this = AnchoredWindowModel{};
}

}  // namespace ratelab
