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

// Each fault `kinds` asks for, drawn from `random` with its chance, in this order:
//   crash           of a random node, with chance 0.7, down 1ms to window/10
//   store-restart   with chance 0.5, down 1 to 50ms
//   store-outage    with chance 0.5, for 1ms to window/10
//   store-failover  with chance 0.7, the replica 1ms to window/2 behind, down 1 to 50ms
//                   (MemoryKv only: its replica is modelled)
//   store-stall     with chance 0.5, for 1ms to window/10: it answers nothing meanwhile, then
//                   runs what it was sent
// (a clock-skew is the search's own: Draw), and
// placed just after a random request of `arrivals` (their times counted from `start`): within
// `round_trip` of it, where it cuts a protocol between its steps. `window` is the policy's (a
// bucket's: its fill time); `nodes` how many there are. None when there are no arrivals.
std::vector<FaultSpec> FaultsNearRequests(Random& random, const std::vector<Arrival>& arrivals,
                                          Instant start, Duration window, int nodes,
                                          Duration round_trip, const SearchFaults& kinds);

}  // namespace ratelab

#endif  // RATELAB_SIM_SWARM_H_
