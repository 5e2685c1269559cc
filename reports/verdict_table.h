// Plain-text views of a comparison for a terminal: the verdict table and the witnesses.
#ifndef RATELAB_REPORTS_VERDICT_TABLE_H_
#define RATELAB_REPORTS_VERDICT_TABLE_H_

#include <string>

#include "sim/demo_scenario.h"

namespace ratelab {

// One row per limiter: protocol, policy, offered, admitted, denied, the most admitted in any
// window against the compared limit, and violations of its own promise and of "N in any W".
std::string RenderVerdictTable(const Comparison& c);

// The first witness of each violation, limiter by limiter (empty when there is none).
std::string RenderWitnesses(const Comparison& c);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_VERDICT_TABLE_H_
