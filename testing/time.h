// The instant the model and simulator tests start from. Header-only; for tests.
#ifndef RATELAB_TESTING_TIME_H_
#define RATELAB_TESTING_TIME_H_

#include <chrono>

#include "model/time.h"

namespace ratelab {

// 12:00:00 on the epoch's day: an edge of every window that divides a day.
inline constexpr Instant kT0 = FromUnixNanos(0) + std::chrono::hours(12);

}  // namespace ratelab

#endif  // RATELAB_TESTING_TIME_H_
