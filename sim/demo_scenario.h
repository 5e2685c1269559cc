// The built-in comparison `ratelab demo` runs: every algorithm, in process, on the same traffic
// (steady, a boundary attack, a burst, many users), judged against its own promise and against
// the claim the seeds make, "no more than N in any window of length W".
#ifndef RATELAB_SIM_DEMO_SCENARIO_H_
#define RATELAB_SIM_DEMO_SCENARIO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"

namespace ratelab {

struct LimiterOutcome {
  std::string protocol;  // "memory-fixed-window"
  Policy policy;
  History history;
  int64_t offered = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  // The most one key had admitted in any span of the compared window.
  int64_t max_in_any_window = 0;
  std::vector<Violation> promise_violations;     // of the algorithm's own promise
  std::vector<Violation> any_window_violations;  // of "limit in any window"
};

struct Comparison {
  uint64_t seed = 0;
  std::vector<std::string> traffic;  // one line per generator
  int64_t limit = 0;                 // the compared claim: `limit` in any `window`
  Duration window{};
  std::vector<LimiterOutcome> limiters;
};

// Runs the demo scenario from `seed` (which drives the many-users traffic).
Result<Comparison> RunDemoScenario(uint64_t seed);

}  // namespace ratelab

#endif  // RATELAB_SIM_DEMO_SCENARIO_H_
