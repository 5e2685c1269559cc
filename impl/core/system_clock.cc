#include "impl/core/system_clock.h"

#include <chrono>

namespace ratelab {

// The one place that reads the machine's clock.
Instant SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

}  // namespace ratelab
