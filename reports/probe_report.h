// What `ratelab probe` reports: a probe run (live/probe_run.h) as a report (ProbeReport, with
// one field list for its JSON both ways), and its views: text for a terminal, JUnit for CI, and
// the HTML page and Markdown comment a report directory holds. `ratelab report` rebuilds the
// views from the JSON. A witness is a timeline of HTTP exchanges: when each was sent and
// answered (seconds from the start), for which user, its status, and the headers that matter.
#ifndef RATELAB_REPORTS_PROBE_REPORT_H_
#define RATELAB_REPORTS_PROBE_REPORT_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "impl/core/status.h"
#include "live/probe_run.h"
#include "reports/fields.h"
#include "reports/output_dir.h"
#include "reports/report_model.h"

namespace ratelab {

// One exchange as a report shows it: {"n", "user", "sent_s", "answered_s", "status" (0: no
// answer), "error" (null when answered), "headers": {name: value} of the ones a probe reads}.
struct ProbeExchangeReport {
  int64_t n = 0;
  std::string user;
  double sent_s = 0;
  double answered_s = 0;
  int64_t status = 0;
  std::optional<std::string> error;
  std::map<std::string, std::string> headers;
};
constexpr auto JsonFields(const ProbeExchangeReport*) {
  using E = ProbeExchangeReport;
  return std::tuple{JsonField("n", &E::n),
                    JsonField("user", &E::user),
                    JsonField("sent_s", &E::sent_s),
                    JsonField("answered_s", &E::answered_s),
                    JsonField("status", &E::status),
                    JsonField("error", &E::error),
                    JsonField("headers", &E::headers)};
}

// A violation, its witness the exchanges that show it.
struct ProbeViolationReport {
  CheckId invariant = CheckId::kAnyWindowCap;
  std::string user;
  std::string summary;
  std::vector<ProbeExchangeReport> witness;
  // The span (or window) the admissions fell in; none for other promises, or in a report
  // written before it was kept.
  std::optional<WindowReport> window = std::nullopt;
};
constexpr auto JsonFields(const ProbeViolationReport*) {
  using V = ProbeViolationReport;
  return std::tuple{JsonField("invariant", &V::invariant), JsonField("user", &V::user),
                    JsonField("summary", &V::summary), JsonField("witness", &V::witness),
                    JsonField("window", &V::window).OrDefault()};
}

struct ProbeLinearizableReport {
  LinearVerdict verdict = LinearVerdict::kLinearizable;
  int64_t calls = 0, users = 0, states = 0, unknown_users = 0;
  std::string lead;
  std::optional<ProbeViolationReport> violation;
  int64_t broken_users = 0;  // whose promise was broken, their search cut short
};
constexpr auto JsonFields(const ProbeLinearizableReport*) {
  using L = ProbeLinearizableReport;
  return std::tuple{JsonField("verdict", &L::verdict),
                    JsonField("calls", &L::calls),
                    JsonField("users", &L::users),
                    JsonField("states", &L::states),
                    JsonField("unknown_users", &L::unknown_users),
                    JsonField("lead", &L::lead),
                    JsonField("violation", &L::violation),
                    JsonField("broken_users", &L::broken_users).OrDefault()};
}

struct ProbeFindingReport {
  CheckId check = CheckId::kServerErrors;
  std::string summary;
  std::vector<ProbeExchangeReport> exchanges;
};
// One of a probe's checks (live/probe_checks.h) by its name; any other check is refused.
void ReadProbeCheck(const JsonReader& r, CheckId& check);
constexpr auto JsonFields(const ProbeFindingReport*) {
  using F = ProbeFindingReport;
  return std::tuple{JsonField("check", &F::check, ReadProbeCheck),
                    JsonField("summary", &F::summary), JsonField("exchanges", &F::exchanges)};
}

struct ProbeReport {
  std::string url, method;
  TrafficKind traffic = TrafficKind::kConstant;
  int64_t users = 0, connections = 0;
  std::string policy;
  CheckId promise = CheckId::kAnyWindowCap;
  double seconds = 0;       // the whole probe: the load, judging it, the Retry-After check
  double load_seconds = 0;  // the load's own (0 in a report written before it was timed apart)
  bool interrupted = false;
  int64_t sent = 0, retry_after_requests = 0;
  int64_t admitted = 0, denied = 0, server_errors = 0, other = 0, unanswered = 0;
  double latency_p50_ms = 0, latency_p99_ms = 0;
  std::vector<ProbeViolationReport> violations;  // the promise's
  ProbeLinearizableReport linearizable;
  std::vector<ProbeFindingReport> findings;  // each fails the probe
  // What the optional checks not asked for saw (a 429 without Retry-After): information.
  std::vector<ProbeFindingReport> notes;
  bool retry_after_checked = false;
  std::string retry_after_note;
  // Whether the denials no order explains were judged: not for a model an earlier admission can
  // give more room (FalseDenialsJudgedOverIntervals), nor in a report written before they were.
  bool false_denials_judged = false;

  // Nothing found: the promise kept, the answers linearizable (or unknown), no finding.
  bool clean() const { return violations.empty() && !linearizable.violation && findings.empty(); }
};
constexpr auto JsonFields(const ProbeReport*) {
  using R = ProbeReport;
  return std::tuple{JsonField("url", &R::url),
                    JsonField("method", &R::method),
                    JsonField("traffic", &R::traffic),
                    JsonField("users", &R::users),
                    JsonField("connections", &R::connections),
                    JsonField("policy", &R::policy),
                    JsonField("promise", &R::promise),
                    JsonField("seconds", &R::seconds),
                    JsonField("load_seconds", &R::load_seconds).OrDefault(),
                    JsonField("interrupted", &R::interrupted),
                    JsonField("sent", &R::sent),
                    JsonField("retry_after_requests", &R::retry_after_requests),
                    JsonField("admitted", &R::admitted),
                    JsonField("denied", &R::denied),
                    JsonField("server_errors", &R::server_errors),
                    JsonField("other", &R::other),
                    JsonField("unanswered", &R::unanswered),
                    JsonField("latency_p50_ms", &R::latency_p50_ms),
                    JsonField("latency_p99_ms", &R::latency_p99_ms),
                    JsonField("violations", &R::violations),
                    JsonField("linearizable", &R::linearizable),
                    JsonField("findings", &R::findings),
                    JsonField("notes", &R::notes).OrDefault(),
                    JsonField("retry_after_checked", &R::retry_after_checked),
                    JsonField("retry_after_note", &R::retry_after_note),
                    JsonField("false_denials_judged", &R::false_denials_judged).OrDefault()};
}

// The enums of a probe report, by name.
nlohmann::json ToJsonValue(TrafficKind traffic);
void ReadJsonValue(const JsonReader& r, TrafficKind& traffic);
nlohmann::json ToJsonValue(CheckId check);
void ReadJsonValue(const JsonReader& r, CheckId& check);

// The report of `result`, a probe of `plan`.
ProbeReport MakeProbeReport(const ProbePlan& plan, const ProbeResult& result);
// Its one verdict: a violation unless clean().
CheckVerdict VerdictOf(const ProbeReport& report);
// Its JSON, with that verdict as "verdict".
nlohmann::json ToJson(const ProbeReport& report);
// The report `ratelab probe --json` (or its report.json) wrote, or InvalidArgument with the
// path of the first problem.
Result<ProbeReport> ProbeReportFromJson(const nlohmann::json& j);

// One exchange as a witness line: "+1.203s..+1.207s  #17 probe-0  200  X-RateLimit-Remaining: 3".
std::string DescribeExchange(const ProbeExchangeReport& e);

// For a terminal: what was sent and answered, latency, the verdict on the promise with each
// violation's timeline, and each finding with its first exchanges.
std::string RenderProbeText(const ProbeReport& report);

// One test case for the promise and one per kind of finding there can be, failed with the
// witness or the finding's exchanges.
std::string RenderProbeJunit(const ProbeReport& report);

// For a pull request: the verdict, what was sent, each check's verdict, each witness collapsed.
std::string RenderProbeMarkdown(const ProbeReport& report);

// One self-contained page for a review: the same as the Markdown, each witness a table.
std::string RenderProbeHtml(const ProbeReport& report);

// Writes report.html, report.md, report.json and junit.xml into `dir` (made ready by
// OutputDir::Prepare), recorded in its manifest: the HTML's path.
Result<std::string> WriteProbeReport(const ProbeReport& report, const OutputDir& dir);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_PROBE_REPORT_H_
