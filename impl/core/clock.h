// The clock interface. Limiters never read a clock themselves: time reaches them in a Request or
// through a Clock they are given, so the simulator can run them on virtual time and a run can be
// replayed from its seed. The only implementation that reads the machine's clock is SystemClock
// (system_clock.cc); nothing else may call std::chrono::*_clock::now(), except a transport's own
// I/O deadlines (HttpServer's timeouts, PostgresPool's wait for an answer), which read steady_clock
// and never reach a decision or a history.
#ifndef RATELAB_IMPL_CORE_CLOCK_H_
#define RATELAB_IMPL_CORE_CLOCK_H_

#include "model/time.h"

namespace ratelab {

class Clock {
 public:
  virtual ~Clock() = default;
  // The current instant on this clock. Thread-safety is the implementation's to state.
  virtual Instant Now() const = 0;
};

// A clock that only moves when told to: for tests and for the simulator's node clocks.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Instant start) : now_(start) {}
  Instant Now() const override { return now_; }
  void Set(Instant t) { now_ = t; }
  void Advance(Duration d) { now_ += d; }

 private:
  Instant now_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_CLOCK_H_
