// What a probe sends: its plan (the request template, the caps, the traffic), checked and
// described before anything is sent, and what an answer is by it (an admission, a denial, ...).
#ifndef RATELAB_LIVE_PROBE_PLAN_H_
#define RATELAB_LIVE_PROBE_PLAN_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "live/http_load.h"
#include "live/probe_checks.h"
#include "model/policy.h"
#include "model/time.h"
#include "sim/traffic.h"

namespace ratelab {

// The caps a probe may be given: no more requests, rate or time than these.
inline constexpr int64_t kProbeMostRequests = 1'000'000;
inline constexpr double kProbeMostPerSecond = 10'000;

// How a probe spreads its requests over time: the traffic kinds (sim/traffic.h) whose row says
// what a probe sends of it.
bool ProbeSends(TrafficKind traffic);
// The kind `name` names that a probe sends, or nullopt.
std::optional<TrafficKind> ProbeTrafficNamed(std::string_view name);
// "constant, poisson, boundary-attack or burst".
std::string ProbeTrafficChoices();

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
  // Whether the user gave the policy's window (--window): a limit stated without a window is
  // held to it, and refused without it.
  bool window_given = false;
  TrafficKind traffic = TrafficKind::kConstant;
  int64_t burst_size = 0;              // bursts: the requests in each (0: twice the limit)
  uint64_t seed = 1;                   // poisson: its gaps and users
  int users = 1;                       // the users requests are for (boundary: the first only)
  std::string user_prefix = "probe-";  // {user} is the prefix and the user's number
  // Its users saw no traffic before the run (the prefix names the run's start): a window of theirs
  // opens at their first admission, not in one left open before.
  bool fresh_users = false;
  int concurrency = 4;
  Duration duration = std::chrono::seconds(10);
  int64_t max_requests = 1000;
  double max_per_second = 50;
  Duration timeout = std::chrono::seconds(5);
  // After the load, Retry-After's honesty is checked on two users of their own, when the wait
  // it advertises is at most this (0: never); the check's requests come out of max_requests.
  Duration retry_after_wait = std::chrono::seconds(10);
  // Optional checks asked for (--require): what they see fails the probe, as any check's does.
  std::vector<CheckId> required;
};

// Whether what `check` sees fails `plan`'s probe: a check always made, or an optional one asked
// for; else it is a note.
bool Required(const ProbePlan& plan, CheckId check);
// Whether `check` is an optional one of a probe's (ProbeCheckInfo::optional).
bool Optional(CheckId check);
// The optional check named `name` ("retry-after-missing"), or InvalidArgument with the choices.
Result<CheckId> ParseRequiredCheck(std::string_view name);

// InvalidArgument naming what is wrong: a URL that is not http://, a method that is not a token,
// a header that is not "Name: value", caps out of range (requests 1 to kProbeMostRequests, rate
// above 0 up to kProbeMostPerSecond, concurrency 1 to 256, users 1 to 1 000 000, a duration
// above 0 up to 1h, a timeout above 0 up to 1m), a denial status that is not 100 to 599.
Status CheckProbePlan(const ProbePlan& plan);

// What the probe will send, in a few lines, for the user to read before it starts.
std::string DescribeProbePlan(const ProbePlan& plan);
// The users the plan's requests are for: --users, but one for the boundary traffic.
int ProbeUsersSent(const ProbePlan& plan);

// The n-th request of `plan`, for `user` (its label).
OutgoingRequest ProbeRequest(const ProbePlan& plan, const HttpUrl& url, const std::string& user,
                             int64_t n);
// `plan`'s user number `i`: its prefix and the number.
std::string ProbeUser(const ProbePlan& plan, int64_t i);

// The time a server is taken to see: whole milliseconds (what most read), so that a decision
// taken at a floored instant is never judged outside its interval.
inline constexpr Duration kProbeResolution = std::chrono::milliseconds(1);

// The answer's headers a probe reads (and keeps: every other is dropped as it arrives).
inline constexpr std::string_view kProbeHeaders[] = {"X-RateLimit-Limit",   "X-RateLimit-Remaining",
                                                     "X-RateLimit-Reset",   "RateLimit-Policy",
                                                     "RateLimit",           "RateLimit-Limit",
                                                     "RateLimit-Remaining", "RateLimit-Reset",
                                                     "Retry-After",         "Date"};

// What an answer is, by `plan`: an admission (2xx, 3xx), a denial (a status or a body the plan
// names), a server error (5xx), none (see the exchange's error), or anything else.
enum class ProbeAnswer { kAdmitted, kDenied, kServerError, kUnanswered, kUnreadable, kOther };
ProbeAnswer AnswerOf(const ProbePlan& plan, const HttpExchange& e);

// Whether `plan`'s load needs an answer before it starts: boundary traffic aims at the edge it
// names, and bursts are sized by the limit the headers state.
bool NeedsFirstLook(const ProbePlan& plan);

// The requests the Retry-After check sends one of its two users until it is denied: enough to
// spend the limit and a few more.
int64_t RetryAfterTries(const Policy& policy);

// The requests the Retry-After check may send for `policy`: for each of its two users, its tries
// and the retry.
int64_t RetryAfterBudget(const Policy& policy);

// Why a run of `plan` does not check Retry-After's honesty, or nothing when it does: it must be
// asked to, know the limit, have a limit it can spend one request at a time, and room under the
// cap (the check's requests come out of it, and leave the load at least as many).
std::optional<std::string> WhyNoRetryAfterCheck(const ProbePlan& plan);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_PLAN_H_
