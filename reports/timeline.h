// A witness as a timeline: every send, store step and answer of its requests, and the faults
// that touch it, in time order. The one row builder for every view that shows a witness: the
// HTML and JUnit reports, `ratelab check` and `ratelab stress`.
#ifndef RATELAB_REPORTS_TIMELINE_H_
#define RATELAB_REPORTS_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "reports/report_model.h"

namespace ratelab {

struct TimelineRow {
  double at_s;       // seconds since the run's start
  int64_t id;        // the request; -1 for a fault
  int order;         // within a request: sent, its steps, answered
  std::string node;  // "node 1"; empty for a fault
  std::string what;  // "sent (user:u1:/api, cost 1)", "step: INCR ...", "admitted", ...
};

// Rows for `witness` and, from `faults`, a row where each fault that overlaps the witness's span
// begins and one where it ends; for a request never answered, the first fault after it too.
std::vector<TimelineRow> WitnessTimeline(const std::vector<WitnessEvent>& witness,
                                         const std::vector<FaultReport>& faults);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_TIMELINE_H_
