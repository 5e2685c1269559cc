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
#ifndef RATELAB_SIM_PROBE_RUN_H_
#define RATELAB_SIM_PROBE_RUN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/service/http_load.h"
#include "judge/checks.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"

namespace ratelab {

// The caps a probe may be given: no more requests, rate or time than these.
inline constexpr int64_t kProbeMostRequests = 1'000'000;
inline constexpr double kProbeMostPerSecond = 10'000;

// How a probe spreads its requests over time: a table, for the CLI and the reports.
enum class ProbeTraffic { kSteady, kPoisson, kBursts, kBoundary };

struct ProbeTrafficInfo {
  ProbeTraffic traffic;
  std::string_view name;
  std::string_view summary;
};

inline constexpr ProbeTrafficInfo kProbeTraffic[] = {
    {ProbeTraffic::kSteady, "steady", "evenly spaced at --max-rps, the users in turn"},
    {ProbeTraffic::kPoisson, "poisson",
     "random (exponential) gaps, half of --max-rps on average, each for a user drawn at random"},
    {ProbeTraffic::kBursts, "bursts",
     "--burst-size requests at once (twice the limit unless given), the users in turn, one burst "
     "each window divided by the users"},
    {ProbeTraffic::kBoundary, "boundary",
     "the limit just before and the limit again just after the window edge the server's reset "
     "header names, for one user"},
};

const ProbeTrafficInfo& Describe(ProbeTraffic traffic);
std::optional<ProbeTraffic> ProbeTrafficNamed(std::string_view name);

struct ProbePlan {
  std::string url;  // http://host[:port]/path
  std::string method = "GET";
  std::vector<HttpHeader> headers;  // values may hold {user} and {n}
  std::string body;                 // may hold {user} and {n}
  std::vector<int> denied_statuses = {429};
  std::vector<std::string> denied_bodies;  // an answer whose body holds one is a denial too
  Policy policy;  // the promise, per user (its limit and window learnt, with policy_from_headers)
  // Learn the policy's limit and window from the first answer that states them
  // (RateLimit-Policy's quota and w; else X-RateLimit-Limit or RateLimit-Limit, with the window
  // of `policy`). Window algorithms only.
  bool policy_from_headers = false;
  ProbeTraffic traffic = ProbeTraffic::kSteady;
  int64_t burst_size = 0;              // bursts: the requests in each (0: twice the limit)
  uint64_t seed = 1;                   // poisson: its gaps and users
  int users = 1;                       // the users requests are for (boundary: the first only)
  std::string user_prefix = "probe-";  // {user} is the prefix and the user's number
  int concurrency = 4;
  Duration duration = std::chrono::seconds(10);
  int64_t max_requests = 1000;
  double max_per_second = 50;
  Duration timeout = std::chrono::seconds(5);
  // After the load, Retry-After's honesty is checked on two users of their own, when the wait
  // it advertises is at most this (0: never); the check's requests come out of max_requests.
  Duration retry_after_wait = std::chrono::seconds(10);
};

// InvalidArgument naming what is wrong: a URL that is not http://, a method that is not a token,
// a header that is not "Name: value", caps out of range (requests 1 to kProbeMostRequests, rate
// above 0 up to kProbeMostPerSecond, concurrency 1 to 256, users 1 to 1 000 000, a duration
// above 0 up to 1h, a timeout above 0 up to 1m), a denial status that is not 100 to 599.
Status CheckProbePlan(const ProbePlan& plan);

// What the probe will send, in a few lines, for the user to read before it starts.
std::string DescribeProbePlan(const ProbePlan& plan);

// The n-th request of `plan`, for `user` (its label).
OutgoingRequest ProbeRequest(const ProbePlan& plan, const HttpUrl& url, const std::string& user,
                             int64_t n);
// `plan`'s user number `i`: its prefix and the number.
std::string ProbeUser(const ProbePlan& plan, int64_t i);

// One request of a probe's load: when, after the load starts, and for which user (by number).
struct ProbeSlot {
  Duration at{};
  int64_t user = 0;
  bool operator==(const ProbeSlot&) const = default;
};

// Where a server's window edge lies, after the load starts: somewhere in [earliest, latest].
struct ProbeEdge {
  Duration earliest{};
  Duration latest{};
};

// The span a reset header (unix seconds, or seconds from now, rounded either way) leaves the
// window's edge in, on the probe's clock: from the first of `e`'s RateLimit t, RateLimit-Reset
// and X-RateLimit-Reset that is a whole number; nothing when none is.
std::optional<std::pair<Instant, Instant>> WindowEdgeFromHeaders(const HttpExchange& e);

// The load of `plan` held to `policy` (its limit and window), in time order: at most `most`
// requests, none at or after the plan's duration. Boundary traffic needs `edge`, and is
// FailedPrecondition when the edge is too unsure for the window (the attack would not fit in
// it), or lies beyond the duration (naming the duration it needs).
Result<std::vector<ProbeSlot>> ProbeSchedule(const ProbePlan& plan, const Policy& policy,
                                             int64_t most,
                                             const std::optional<ProbeEdge>& edge = std::nullopt);

// The answer's headers a probe reads (and keeps: every other is dropped as it arrives).
inline constexpr std::string_view kProbeHeaders[] = {
    "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",   "RateLimit-Policy",
    "RateLimit",         "RateLimit-Limit",       "RateLimit-Remaining", "RateLimit-Reset",
    "Retry-After"};

// The checks of what only HTTP shows, by name.
inline constexpr std::string_view kProbeFindingChecks[] = {
    "server-errors",      "retry-after-missing",   "retry-after-too-long",
    "header-syntax",      "remaining-above-model", "reset-in-the-past",
    "reset-beyond-model", "remaining-rose",        "retry-after-dishonest"};

// Something only HTTP shows, with the exchanges (by number) that show it.
struct ProbeFinding {
  std::string check;  // one of kProbeFindingChecks
  std::string summary;
  std::vector<int64_t> exchanges;  // at most a few
};

struct ProbeResult {
  Instant start{};
  Duration elapsed{};
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
  Policy policy;                      // the promise judged (the plan's, or learnt from the headers)
  std::string promise;                // the invariant the promise is judged as
  std::vector<Violation> violations;  // the promise's
  // Whether some order of the requests, each decided inside its interval, gives every answer
  // (admitted or denied) the policy's model gives; its violation, if any, is not in `violations`.
  LinearizabilityJudgement linearizability;
  std::vector<ProbeFinding> findings;
  // Whether Retry-After's honesty was checked, and if not, why not.
  bool retry_after_checked = false;
  std::string retry_after_note;
  int64_t retry_after_requests = 0;  // the check's, the last of `exchanges` (not in `history`)

  // Nothing found: the promise kept, the answers linearizable (or unknown), no finding.
  bool clean() const {
    return violations.empty() && !linearizability.violation && findings.empty();
  }
};

using ProbeProgress = std::function<void(Duration elapsed, int64_t answered)>;

// Runs `plan` (which must pass CheckProbePlan) and judges it. Unavailable when the host cannot
// be resolved, or when not one request was answered (naming the first error); FailedPrecondition
// when every answer was neither an admission nor a denial (a wrong URL, method or body: the
// statuses say which).
Result<ProbeResult> RunProbe(const ProbePlan& plan, const Clock& clock,
                             const ProbeProgress& progress = nullptr,
                             const std::function<bool()>& stop = nullptr);

// Judges the exchanges of `plan` (as RunProbe does after sending them): for tests and replays.
// FailedPrecondition when the policy is to be learnt from headers and no answer states one.
Result<ProbeResult> JudgeProbe(const ProbePlan& plan, std::vector<HttpExchange> exchanges);

// The window policy of `model`'s algorithm that the first answer stating one gives (the first
// member of RateLimit-Policy: its quota, and its w or else `model`'s window; else
// X-RateLimit-Limit or RateLimit-Limit with `model`'s window), or nothing.
std::optional<Policy> PolicyFromHeaders(const Policy& model,
                                        const std::vector<HttpExchange>& exchanges);

}  // namespace ratelab

#endif  // RATELAB_SIM_PROBE_RUN_H_
