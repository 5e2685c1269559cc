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

// A witness as one row per request, for reports a reviewer reads: when it was sent, its store
// steps when it took several (one step says no more than its outcome), and what it got; with a
// row for each fault that touches the witness (as WitnessTimeline chooses them), in time order.
struct RequestRow {
  double sent_s = 0;  // seconds since the run's start (a fault: when it begins)
  int64_t id = -1;    // -1 for a fault
  std::string node;   // "node 1"; empty for a fault
  std::string key;
  int64_t cost = 1;
  std::vector<WitnessStep> steps;  // empty unless the request took several
  std::string outcome;             // "admitted", "denied, retry after 1s", ...; a fault: what
};
std::vector<RequestRow> WitnessRequests(const std::vector<WitnessEvent>& witness,
                                        const std::vector<FaultReport>& faults);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_TIMELINE_H_
