// A simulated deployment: nodes (limiter processes), each with its own clock, executor and
// protocol instance, all on one event loop. Traffic arrives at true times and is routed to a
// live node; every step of every request is applied at a virtual time drawn from the seed; the
// outcome is a History. One seed, one history. Each request draws its node and the latencies of
// its steps from a random stream of its own (Arrival::stream), so a request taken away from a run
// leaves every other request's draws as they were.
//
// The protocol instances are whatever the factory makes: in-process limiters keep their state
// per node; a protocol over a shared store (one store captured by the factory) shares it.
//
// Single-threaded, no statics. Not reusable: construct one Simulation per run.
#ifndef RATELAB_SIM_SIMULATION_H_
#define RATELAB_SIM_SIMULATION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "impl/core/frame_pool.h"
#include "impl/limiters/protocol.h"
#include "model/history.h"
#include "sim/event_loop.h"
#include "sim/node_clock.h"
#include "sim/random.h"
#include "sim/simulation_executor.h"
#include "sim/traffic.h"

namespace ratelab {

struct NodeSpec {
  Duration clock_offset{};  // the node's clock reads this far ahead of true time
  int64_t drift_ppm = 0;    // and gains this many microseconds per second
};

struct SimulationConfig {
  uint64_t seed = 1;
  Instant start{};
  std::vector<NodeSpec> nodes = {NodeSpec{}};
  Latency to_store;    // request leg of every step
  Latency from_store;  // reply leg of every step
  Buggify buggify;
};

// Makes node `node`'s protocol instance (called when Run starts; a restart calls
// Protocol::Restart).
using ProtocolFactory = std::function<std::unique_ptr<Protocol>(int node)>;

class Simulation {
 public:
  Simulation(SimulationConfig config, const ProtocolFactory& factory);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Faults, scheduled before Run. A crash at `at` loses the node's requests in flight (no answer
  // is recorded for them) and its process memory (Protocol::Restart); it takes traffic again
  // `down_for` later.
  void CrashNode(int node, Instant at, Duration down_for);
  // From `at` on, node `node`'s clock reads `by` further ahead (negative: behind).
  void JumpClock(int node, Instant at, Duration by);
  // From `at` for `length`, every leg of every step takes `extra` longer (overlapping spikes
  // add up).
  void LatencySpike(Instant at, Duration length, Duration extra);
  // Replaces the factory (before Run): for callers whose stores need the run's clock().
  void SetFactory(ProtocolFactory factory) { factory_ = std::move(factory); }
  // Runs `action` at `at` (store faults: the stores belong to the caller).
  void At(Instant at, EventLoop::Callback action) { loop_.At(at, std::move(action)); }

  // Schedules `arrivals` (one before config.start arrives at the start), runs until every request
  // has completed or been lost, and returns the history (event ids are arrival indexes).
  History Run(const std::vector<Arrival>& arrivals);

  const EventLoop& loop() const { return loop_; }
  // The state the nodes' protocol instances hold in process memory, summed (after Run).
  StateSize ProcessState() const;
  // True (virtual) time: the clock for stores shared by the nodes.
  const Clock& clock() const { return loop_; }

 private:
  struct InFlight;
  struct Node;

  void Arrive(int64_t id, const Arrival& a);
  // Appends arrival `i`'s history event (its id, cost and key); history_ holds arrivals 0..i-1.
  void MakeEvent(size_t i, const Arrival& a);
  void Finish(int64_t id);
  int PickNode(Random& random);

  // The memory of the requests in flight and their coroutines' frames, taken again once given
  // back. Declared first, so destroyed after everything whose frames it holds.
  FramePool frames_;
  SimulationConfig config_;
  ProtocolFactory factory_;
  EventLoop loop_;
  Random root_;  // the seed's: each request's stream is forked from it
  std::vector<std::unique_ptr<Node>> nodes_;
  History history_;
  // By request id: the requests in flight (null when answered, lost, or not yet arrived).
  // Declared after nodes_, so destroyed before the executors its coroutines refer to.
  std::vector<std::unique_ptr<InFlight>> in_flight_;
  std::vector<size_t> arrival_order_;  // indexes into the arrivals, by time
  std::vector<std::string> keys_;      // the run's distinct keys, in the order first seen
  std::vector<int32_t> key_of_;        // by arrival: its key's index in keys_
  std::vector<int32_t> key_rank_;      // by index in keys_: the key's place in key order
};

}  // namespace ratelab

#endif  // RATELAB_SIM_SIMULATION_H_
