// What `ratelab stress` reports: a stress run (live/stress_run.h) as a StressReport
// (report_model.h), printed as JSON or as text for a terminal.
#ifndef RATELAB_REPORTS_STRESS_REPORT_H_
#define RATELAB_REPORTS_STRESS_REPORT_H_

#include <string>

#include "live/stress_run.h"
#include "reports/output_dir.h"
#include "reports/report_model.h"

namespace ratelab {

// The report of `result`, a run of `plan`; witness times count from the run's start.
StressReport MakeStressReport(const StressPlan& plan, const StressResult& result);

// For a terminal: throughput, latency, the busiest key against its promise, the verdicts (the
// promise, linearizability), and each violation with its witness, a line per request (at most 16).
std::string RenderStressText(const StressReport& report);

// For CI: a test case for the promise and one for linearizability, with the run's time; each failed
// with its first violation's witness, or an error when the limiter failed.
std::string RenderStressJunit(const StressReport& report);
// For a design review: the verdict, each violation's witness drawn (a lane per node, each thread
// being one; each request the interval its decision fell in) and tabled, what was run.
std::string RenderStressHtml(const StressReport& report);
// Writes into `dir` report.html (RenderStressHtml), report.md (the text view), report.json and
// junit.xml: the path of report.html, or why not.
Result<std::string> WriteStressReport(const StressReport& report, const OutputDir& dir);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_STRESS_REPORT_H_
