// When a probe sends each request of its load, and for which user: steady, Poisson, bursts, or
// the boundary attack aimed at the window edge the server's reset header names. The load is the
// simulator's traffic (sim/traffic.h), made by the same generators as a scenario's.
#ifndef RATELAB_LIVE_PROBE_SCHEDULE_H_
#define RATELAB_LIVE_PROBE_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "impl/core/status.h"
#include "live/probe_plan.h"
#include "model/policy.h"
#include "model/time.h"

namespace ratelab {

// One request of a probe's load: when, after the load starts, and for which user (by number).
struct ProbeSlot {
  Duration at{};
  int64_t user = 0;
  bool operator==(const ProbeSlot&) const = default;
};

// Where a server's window edge lies, after the load starts: somewhere in [earliest, latest].
struct ProbeEdge {
  Duration earliest{};
  Duration latest{};
};

// The load of `plan` held to `policy` (its limit and window), in time order: at most `most`
// requests, none at or after the plan's duration. Boundary traffic needs `edge`, and is
// FailedPrecondition when the edge is too unsure for the window (the attack would not fit in
// it), or lies beyond the duration (naming the duration it needs).
Result<std::vector<ProbeSlot>> ProbeSchedule(const ProbePlan& plan, const Policy& policy,
                                             int64_t most,
                                             const std::optional<ProbeEdge>& edge = std::nullopt);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_SCHEDULE_H_
