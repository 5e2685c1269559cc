// A probe's exchanges judged: the promise over wall-clock intervals, linearizability, and what
// only HTTP shows (live/probe_findings.h). Pure: JudgeProbe reads nothing but the exchanges.
#ifndef RATELAB_LIVE_PROBE_JUDGE_H_
#define RATELAB_LIVE_PROBE_JUDGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "judge/checks.h"
#include "live/http_load.h"
#include "live/probe_findings.h"
#include "live/probe_plan.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"

namespace ratelab {

struct ProbeResult {
  Instant start{};
  Duration load_elapsed{};  // the load's own: from the start to its last answer
  Duration elapsed{};       // the whole probe: the load, judging it, and the Retry-After check
  bool interrupted = false;
  std::vector<HttpExchange> exchanges;
  History history;  // an event per exchange, ids their positions; key: the user
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t server_errors = 0;  // 5xx
  int64_t unanswered = 0;     // no answer (see each exchange's error)
  int64_t other = 0;          // any other status: neither an admission nor a denial
  Duration latency_p50{};
  Duration latency_p99{};
  Policy policy;  // the promise judged (the plan's, or learnt from the headers)
  CheckId promise = CheckId::kAnyWindowCap;  // the invariant the promise is judged as
  std::vector<Violation> violations;         // the promise's
  // Whether some order of the requests, each decided inside its interval, gives every answer
  // (admitted or denied) the policy's model gives; its violation, if any, is not in `violations`.
  LinearizabilityJudgement linearizability;
  std::vector<ProbeFinding> findings;  // of the checks required: each fails the probe
  std::vector<ProbeFinding> notes;     // of the optional checks not asked for: information
  // Whether Retry-After's honesty was checked, and if not, why not.
  bool retry_after_checked = false;
  std::string retry_after_note;
  int64_t retry_after_requests = 0;  // the check's, the last of `exchanges` (not in `history`)

  // Nothing found: the promise kept, the answers linearizable (or unknown), no finding.
  bool clean() const {
    return violations.empty() && !linearizability.violation && findings.empty();
  }
};

// Judges the exchanges of `plan` (as RunProbe does after sending them): for tests and replays.
// FailedPrecondition when the policy is to be learnt from headers and no answer states one.
Result<ProbeResult> JudgeProbe(const ProbePlan& plan, std::vector<HttpExchange> exchanges);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_JUDGE_H_
