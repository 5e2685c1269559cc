// Swarm mode, after FoundationDB's swarm testing: every seed draws its own handful of faults
// (node crashes, clock jumps, store outages and restarts, latency spikes) at its own times, so a
// sweep over many seeds covers combinations nobody wrote down. The faults are a function of the
// seed, printed with the run, and replayed by the same seed.
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

}  // namespace ratelab

#endif  // RATELAB_SIM_SWARM_H_
