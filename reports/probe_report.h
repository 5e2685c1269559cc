// What `ratelab probe` reports: a probe run (sim/probe_run.h) as text for a terminal, as JSON,
// and as JUnit for CI. A witness is a timeline of HTTP exchanges: when each was sent and
// answered (seconds from the start), for which user, its status, and the headers that matter.
#ifndef RATELAB_REPORTS_PROBE_REPORT_H_
#define RATELAB_REPORTS_PROBE_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "sim/probe_run.h"

namespace ratelab {

// One exchange as a witness line: "+1.203s..+1.207s  #17 probe-0  200  X-RateLimit-Remaining: 3".
std::string DescribeExchange(const ProbePlan& plan, const ProbeResult& result, int64_t n);

// For a terminal: what was sent and answered, latency, the verdict on the promise with each
// violation's timeline, and each finding with its first exchanges.
std::string RenderProbeText(const ProbePlan& plan, const ProbeResult& result);

// Everything above as JSON, each witness exchange with its times, status and headers.
nlohmann::json ProbeJson(const ProbePlan& plan, const ProbeResult& result);

// One test case for the promise and one per kind of finding there can be, failed with the
// witness or the finding's exchanges.
std::string RenderProbeJunit(const ProbePlan& plan, const ProbeResult& result);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_PROBE_REPORT_H_
