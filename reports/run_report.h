// From what the simulator and the search made to the report model (report_model.h): a run's
// result with its metrics, time series and busiest users computed (metrics.h), and the witness
// events and faults of any history, times counted from the run's start.
#ifndef RATELAB_REPORTS_RUN_REPORT_H_
#define RATELAB_REPORTS_RUN_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "judge/checks.h"
#include "model/history.h"
#include "reports/report_model.h"
#include "sim/scenario_run.h"

namespace ratelab {

// The report of `run`: every number the views show.
RunReport MakeRunReport(const RunResult& run);

// Witness events for `events`, times relative to `start`.
std::vector<WitnessEvent> WitnessEvents(const std::vector<HistoryEvent>& events, Instant start);
// The history a witness prints, read back (WitnessEvents' inverse for what the checks judge): each
// request's instants from `start` to the nanosecond, its steps, cost and outcome (admitted, with
// its wait; denied, with its Retry-After; no answer; the client's own decision; failed).
History HistoryOf(const std::vector<WitnessEvent>& witness, Instant start);
// A run's faults, times relative to `start`.
std::vector<FaultReport> FaultReports(const std::vector<FaultWindow>& faults, Instant start);
// The report of a violation that check `check` found, its witness relative to `start`.
ViolationReport MakeViolationReport(CheckId check, const Violation& v, Instant start);
// The same with the witness given (a search's minimal case, rather than the violation's own).
ViolationReport MakeViolationReport(CheckId check, const Violation& v, Instant start,
                                    std::vector<WitnessEvent> witness);

// Every request of `run`, one JSON object a line (JSON Lines), each limiter's in the order it was
// sent: {"limiter", "id", "key", "node", "cost", "sent_s", "answered_s" (null: never answered),
// "outcome" ("admitted", "denied", "unanswered", "failed"), and for a decision "remaining",
// "reset_s", "retry_after_s" (a denial's; null when no wait admits it), "wait_s"; for a failure,
// "failure"}, times in seconds from the run's start. What a replay of another project's test
// compares request by request (docs/scenarios.md). False when `out` could not be written.
bool WriteRequestLog(const RunResult& run, std::ostream& out);

// A request the limiter failed on, in words: "#17 (KEY, node 2, sent at 12:00:01.000): ERROR".
std::string DescribeFailure(const HistoryEvent& e);

// 16 hex digits.
std::string HexHash(uint64_t h);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_RUN_REPORT_H_
