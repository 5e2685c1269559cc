// What `ratelab probe` reports: a probe run (sim/probe_run.h) as text for a terminal, as JSON,
// as JUnit for CI, and as the HTML page and Markdown comment a report directory holds. A witness is
// a timeline of HTTP exchanges: when each was sent and answered (seconds from the start), for which
// user, its status, and the headers that matter.
#ifndef RATELAB_REPORTS_PROBE_REPORT_H_
#define RATELAB_REPORTS_PROBE_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "impl/core/status.h"
#include "live/probe_run.h"
#include "reports/output_dir.h"

namespace ratelab {

// One exchange as a witness line: "+1.203s..+1.207s  #17 probe-0  200  X-RateLimit-Remaining: 3".
std::string DescribeExchange(const ProbeResult& result, int64_t n);

// For a terminal: what was sent and answered, latency, the verdict on the promise with each
// violation's timeline, and each finding with its first exchanges.
std::string RenderProbeText(const ProbeResult& result);

// Everything above as JSON, each witness exchange with its times, status and headers.
nlohmann::json ProbeJson(const ProbePlan& plan, const ProbeResult& result);

// One test case for the promise and one per kind of finding there can be, failed with the
// witness or the finding's exchanges.
std::string RenderProbeJunit(const ProbePlan& plan, const ProbeResult& result);

// For a pull request: the verdict, what was sent, each check's verdict, each witness collapsed.
std::string RenderProbeMarkdown(const ProbePlan& plan, const ProbeResult& result);

// One self-contained page for a review: the same as the Markdown, each witness a table.
std::string RenderProbeHtml(const ProbePlan& plan, const ProbeResult& result);

// Writes report.html, report.md, report.json and junit.xml into `dir` (made ready by
// OutputDir::Prepare), recorded in its manifest: the HTML's path.
Result<std::string> WriteProbeReport(const ProbePlan& plan, const ProbeResult& result,
                                     const OutputDir& dir);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_PROBE_REPORT_H_
