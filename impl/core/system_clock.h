// The real wall clock, for real mode. Thread-safe.
#ifndef RATELAB_IMPL_CORE_SYSTEM_CLOCK_H_
#define RATELAB_IMPL_CORE_SYSTEM_CLOCK_H_

#include "impl/core/clock.h"

namespace ratelab {

class SystemClock final : public Clock {
 public:
  Instant Now() const override;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_SYSTEM_CLOCK_H_
