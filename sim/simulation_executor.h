// The executor of one simulated node. Each submitted step is applied atomically at a virtual
// time drawn from the latency model (request out to the store), and its coroutine is resumed
// later (reply back), so the steps of concurrent requests interleave as they could in
// production, and the same seed interleaves them the same way.
//
// BUGGIFY: when the run turns it on (drawn from the seed), a step is now and then delayed much
// longer than usual, which makes rare interleavings common.
//
// A crash (Crash) forgets every step in flight: one not yet applied never is, one applied but
// not yet answered never answers. Single-threaded; owned by the simulation.
#ifndef RATELAB_SIM_SIMULATION_EXECUTOR_H_
#define RATELAB_SIM_SIMULATION_EXECUTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "impl/core/step.h"
#include "sim/event_loop.h"
#include "sim/random.h"

namespace ratelab {

// One way of a trip to the store: `base` plus a uniform jitter in [0, jitter).
struct Latency {
  Duration base{};
  Duration jitter{};
  Duration Draw(Random& random) const {
    return base + (jitter.count() > 0 ? Duration(random.Uniform(0, jitter.count())) : Duration(0));
  }
};

struct Buggify {
  bool enabled = false;
  double probability = 0.05;  // of delaying one leg of a step
  Duration max_delay{};       // the delay is uniform in [0, max_delay)
};

class SimulationExecutor final : public Executor, private EventTarget {
 public:
  // Told of every applied step, and of every resumption (after which a request may be done).
  struct Observer {
    absl::AnyInvocable<void(int64_t request, const std::string& label, Instant at)> applied;
    absl::AnyInvocable<void(int64_t request)> resumed;
    // The random stream of a request in flight: its steps' latencies are drawn from it.
    absl::AnyInvocable<Random&(int64_t request)> random;
  };

  SimulationExecutor(EventLoop& loop, Latency out, Latency back, Buggify buggify, Observer observer)
      : loop_(loop), out_(out), back_(back), buggify_(buggify), observer_(std::move(observer)) {}

  bool RunsInline() const override { return false; }
  void Submit(PendingStep& step) override;

  // Adds `delta` to both legs of every step from now on: a latency spike starts with +extra
  // and ends with -extra, so overlapping spikes add up.
  void AddExtraLatency(Duration delta) { extra_ += delta; }

  // Forgets every step in flight (their coroutines are about to be destroyed).
  void Crash() {
    for (PendingStep*& slot : slots_) slot = nullptr;
  }

 private:
  Duration Leg(const Latency& l, Random& random);
  // Takes a slot for `step`; a slot stays taken until its step's last event has run.
  uint32_t Hold(PendingStep& step);
  void Release(uint32_t slot) { free_.push_back(slot); }

  EventLoop& loop_;
  Latency out_;
  Latency back_;
  Buggify buggify_;
  Duration extra_{};
  Observer observer_;
  // A step's two legs are events of this executor: arg is the slot times two, plus one for the
  // way back.
  void OnEvent(uint64_t arg) override;

  // Steps in flight, by slot; a crash nulls them so their pending events do nothing.
  std::vector<PendingStep*> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_SIMULATION_EXECUTOR_H_
