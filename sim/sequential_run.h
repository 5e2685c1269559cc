// Runs traffic through protocols one request at a time, in real mode (InlineExecutor): each
// request is decided completely before the next arrives, so invoke = apply = complete. The
// event-driven simulator, with latency, interleaving and faults, builds on the same pieces.
#ifndef RATELAB_SIM_SEQUENTIAL_RUN_H_
#define RATELAB_SIM_SEQUENTIAL_RUN_H_

#include <vector>

#include "impl/core/status.h"
#include "impl/limiters/protocol.h"
#include "model/history.h"
#include "sim/traffic.h"

namespace ratelab {

// The history of `arrivals` (in time order) decided by `protocol`; each request's key is its
// user and endpoint. Fails on the first request the protocol cannot decide.
Result<History> RunSequential(Protocol& protocol, const std::vector<Arrival>& arrivals);

}  // namespace ratelab

#endif  // RATELAB_SIM_SEQUENTIAL_RUN_H_
