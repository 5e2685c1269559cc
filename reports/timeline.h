// A witness as a timeline: every send, store step and answer of its requests, and the faults
// that touch it, in time order. One row builder for every view that shows a witness: the HTML
// and JUnit reports (from report.json) and `ratelab check` (from its history, through the same
// JSON).
#ifndef RATELAB_REPORTS_TIMELINE_H_
#define RATELAB_REPORTS_TIMELINE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/history.h"
#include "sim/scenario_run.h"

namespace ratelab {

struct TimelineRow {
  double at_s;       // seconds since the run's start
  int64_t id;        // the request; -1 for a fault
  int order;         // within a request: sent, its steps, answered
  std::string node;  // "node 1"; empty for a fault
  std::string what;  // "sent (user:u1:/api, cost 1)", "step: INCR ...", "admitted", ...
};

// Rows for `witness` (ResultJson's witness events) and, from `faults` ([{what, from_s, to_s}]),
// a row where each fault that overlaps the witness's span begins and one where it ends.
std::vector<TimelineRow> WitnessTimeline(const nlohmann::json& witness,
                                         const nlohmann::json& faults);

// The JSON that ResultJson writes for witness events and for a run's faults, times relative to
// `start`.
nlohmann::json WitnessJson(const std::vector<HistoryEvent>& events, Instant start);
nlohmann::json FaultsJson(const std::vector<FaultWindow>& faults, Instant start);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_TIMELINE_H_
