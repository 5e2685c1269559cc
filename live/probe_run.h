// `ratelab probe`: a running HTTP rate limiter judged black-box. Requests made from a template
// (its method, headers and body, with {user} and {n} filled in) are sent over keep-alive
// connections (impl/service/http_load.h), under a hard cap on their number and rate, and every
// exchange is judged two ways:
//   - the promise, over wall-clock intervals, as `ratelab stress` judges (a decision took effect
//     somewhere between sent and answered, on a server whose clock is the probe's): only what is
//     broken wherever each decision fell is reported; an answer that is neither an admission
//     (2xx, 3xx) nor a denial (429, or --denied-if) is counted as unknown, never as admitted;
//   - what only HTTP shows: 5xx answers, Retry-After missing from a denial or longer than the
//     model ever waits (milliseconds for seconds), rate-limit headers that break their grammar
//     (the IETF structured fields, of draft 6, 7 or later), a Remaining above what the model's
//     limit leaves after the admissions seen before it, a reset time in the past or later than
//     the model is ever whole again, and (for a fixed or anchored window) a Remaining that rises
//     before the reset the server named.
// A run in which the server never answered, or answered nothing but errors, is an error, never
// "nothing found".
#ifndef RATELAB_LIVE_PROBE_RUN_H_
#define RATELAB_LIVE_PROBE_RUN_H_

#include <functional>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "live/http_load.h"
#include "live/probe_findings.h"
#include "live/probe_judge.h"
#include "live/probe_plan.h"
#include "live/probe_schedule.h"
#include "model/time.h"

namespace ratelab {

using ProbeProgress = std::function<void(Duration elapsed, int64_t answered)>;

// Runs `plan` (which must pass CheckProbePlan) and judges it. Unavailable when the host cannot
// be resolved, or when not one request was answered (naming the first error); FailedPrecondition
// when every answer was neither an admission nor a denial (a wrong URL, method or body: the
// statuses say which).
Result<ProbeResult> RunProbe(const ProbePlan& plan, const Clock& clock,
                             const ProbeProgress& progress = nullptr,
                             const std::function<bool()>& stop = nullptr);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_RUN_H_
