// What a reader must know about each fault of a run to read its verdicts: that a crash forgot an
// in-process limiter's counts, what a store restart kept under each limiter's durability, what a
// limiter does while its store is unreachable.
#ifndef RATELAB_SIM_FAULT_NOTES_H_
#define RATELAB_SIM_FAULT_NOTES_H_

#include <string>
#include <vector>

#include "sim/scenario.h"
#include "sim/store_source.h"

namespace ratelab {

// One note per fault that needs one, in fault order, each limiter's part in it: "WHAT: LIMITER
// NOTE; LIMITER NOTE".
std::vector<std::string> FaultNotes(const Scenario& scenario, const std::vector<FaultSpec>& faults,
                                    const StoreSource& kv_source);

}  // namespace ratelab

#endif  // RATELAB_SIM_FAULT_NOTES_H_
