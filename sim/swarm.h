// Swarm mode, after FoundationDB's swarm testing: every seed draws its own handful of faults
// (node crashes, clock jumps, store outages and restarts, latency spikes) at its own times, so a
// sweep over many seeds covers combinations nobody wrote down. The faults are a function of the
// seed, printed with the run, and replayed by the same seed. The search behind `ratelab check`
// (search.h) draws its faults here too, placed just after requests.
#ifndef RATELAB_SIM_SWARM_H_
#define RATELAB_SIM_SWARM_H_

#include <vector>

#include "sim/random.h"
#include "sim/scenario.h"

namespace ratelab {

// One to three faults within the first `span` of `scenario` (store faults only when
// `has_store`), drawn from `random`.
std::vector<FaultSpec> SwarmFaults(Random random, const Scenario& scenario, Duration span,
                                   bool has_store);

// The faults a search may draw near requests (sim/search.h).
struct NearRequestFaults {
  bool crash = false;    // of a random node, with chance 0.7, down 1ms to window/10
  bool restart = false;  // of the store, with chance 0.5, down 1 to 50ms
  bool outage = false;   // of the store, with chance 0.5, for 1ms to window/10
  // of the store to its replica, with chance 0.7, the replica 1ms to window/2 behind, down 1 to
  // 50ms (MemoryKv only: its replica is modelled)
  bool failover = false;
  // of the store, with chance 0.5, for 1ms to window/10: it answers nothing meanwhile, then runs
  // what it was sent
  bool stall = false;
};
// Each fault `kinds` asks for, drawn from `random` with its chance (in the order above), and
// placed just after a random request of `arrivals` (their times counted from `start`): within
// `round_trip` of it, where it cuts a protocol between its steps. `window` is the policy's (a
// bucket's: its fill time); `nodes` how many there are. None when there are no arrivals.
std::vector<FaultSpec> FaultsNearRequests(Random& random, const std::vector<Arrival>& arrivals,
                                          Instant start, Duration window, int nodes,
                                          Duration round_trip, NearRequestFaults kinds);

}  // namespace ratelab

#endif  // RATELAB_SIM_SWARM_H_
