// A node's clock: true time plus an offset and a drift. Services that compute the window on each
// app server (from its own Date.now()) disagree on the window when their clocks do; this is the
// hundred-line clock-skew model that lets the simulator show what that costs.
#ifndef RATELAB_SIM_NODE_CLOCK_H_
#define RATELAB_SIM_NODE_CLOCK_H_

#include <cstdint>

#include "model/time.h"

namespace ratelab {

class NodeClock {
 public:
  // Reads `offset` ahead of true time at `origin`, and gains `drift_ppm` microseconds per second
  // of true time after it (negative: loses).
  NodeClock(Instant origin, Duration offset, int64_t drift_ppm)
      : origin_(origin), offset_(offset), drift_ppm_(drift_ppm) {}

  // What this node's clock reads at true time `t`.
  Instant Read(Instant t) const {
    const Int128 drift = Int128{(t - origin_).count()} * drift_ppm_ / 1'000'000;
    return t + offset_ + Duration(static_cast<int64_t>(drift));
  }
  // A jump (NTP step, operator error): from now on the clock reads `by` further ahead.
  void Jump(Duration by) { offset_ += by; }

 private:
  Instant origin_;
  Duration offset_;
  int64_t drift_ppm_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_NODE_CLOCK_H_
