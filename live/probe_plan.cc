#include "live/probe_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "model/named.h"

namespace ratelab {

namespace {

std::string Filled(const std::string& text, const std::string& user, int64_t n) {
  return absl::StrReplaceAll(text, {{"{user}", user}, {"{n}", absl::StrCat(n)}});
}

// The most tries the Retry-After check makes a user (it sends them one at a time, so a larger
// limit would take it far past the load's duration).
constexpr int64_t kRetryAfterMostTries = 100;

}  // namespace

ProbeAnswer AnswerOf(const ProbePlan& plan, const HttpExchange& e) {
  if (e.unreadable) return ProbeAnswer::kUnreadable;
  if (!e.answered_ok()) return ProbeAnswer::kUnanswered;
  for (const std::string& text : plan.denied_bodies) {
    if (e.body.find(text) != std::string::npos) return ProbeAnswer::kDenied;
  }
  if (std::find(plan.denied_statuses.begin(), plan.denied_statuses.end(), e.status) !=
      plan.denied_statuses.end()) {
    return ProbeAnswer::kDenied;
  }
  if (e.status >= 200 && e.status < 400) return ProbeAnswer::kAdmitted;
  if (e.status >= 500) return ProbeAnswer::kServerError;
  return ProbeAnswer::kOther;
}

bool Required(const ProbePlan& plan, CheckId check) {
  return !Optional(check) ||
         std::find(plan.required.begin(), plan.required.end(), check) != plan.required.end();
}

bool Optional(CheckId check) {
  for (const ProbeCheckInfo& row : kProbeChecks) {
    if (row.id == check) return row.optional;
  }
  return false;
}

Result<CheckId> ParseRequiredCheck(std::string_view name) {
  const std::vector<CheckId> optional = ProbeCheckIds(/*only_optional=*/true);
  if (const std::optional<CheckId> check = CheckNamed(name, optional)) return *check;
  return absl::InvalidArgumentError("unknown optional check '" + std::string(name) +
                                    "' (expected " + CheckChoices(optional) + ")");
}

bool NeedsFirstLook(const ProbePlan& plan) {
  return plan.traffic == TrafficKind::kBoundaryAttack ||
         (plan.traffic == TrafficKind::kBurst && plan.policy_from_headers && plan.burst_size == 0);
}

// The requests the Retry-After check sends one of its two users until it is denied: enough to
// spend the limit and a few more.
int64_t RetryAfterTries(const Policy& policy) { return policy.limit + 3; }

// The requests the Retry-After check may send for `policy`: for each of its two users, its tries
// and the retry.
int64_t RetryAfterBudget(const Policy& policy) { return 2 * (RetryAfterTries(policy) + 1); }

// Why a run of `plan` does not check Retry-After's honesty, or nothing when it does: it must be
// asked to, know the limit, have a limit it can spend one request at a time, and room under the
// cap (the check's requests come out of it, and leave the load at least as many).
std::optional<std::string> WhyNoRetryAfterCheck(const ProbePlan& plan) {
  if (plan.retry_after_wait <= Duration(0)) return "--retry-after-wait 0";
  if (plan.policy_from_headers) return "the model is learnt from the headers";
  if (RetryAfterTries(plan.policy) > kRetryAfterMostTries) {
    return absl::StrCat("a limit of ", plan.policy.limit,
                        " is too many to spend one request at a time");
  }
  if (plan.max_requests < 2 * RetryAfterBudget(plan.policy)) {
    return absl::StrCat("--max-requests leaves no room for its ", RetryAfterBudget(plan.policy),
                        " requests");
  }
  return std::nullopt;
}

Status CheckProbePlan(const ProbePlan& plan) {
  if (Result<HttpUrl> url = ParseHttpUrl(plan.url); !url.ok()) return url.status();
  const auto bad = [](std::string why) { return absl::InvalidArgumentError(std::move(why)); };
  if (!IsHttpToken(plan.method))
    return bad("--method: '" + plan.method + "' is not an HTTP method");
  for (const HttpHeader& h : plan.headers) {
    if (!IsHttpToken(h.name)) return bad("--header: '" + h.name + "' is not a header name");
    if (h.value.find_first_of("\r\n") != std::string::npos) {
      return bad("--header: the value of " + h.name + " has a line break");
    }
  }
  if (!ProbeSends(plan.traffic)) {
    return bad("--traffic: a probe does not send " + std::string(TrafficKindName(plan.traffic)) +
               " traffic (" + ProbeTrafficChoices() + ")");
  }
  if (plan.traffic == TrafficKind::kBoundaryAttack && plan.policy.IsBucket()) {
    return bad(
        "--traffic boundary-attack aims at a window's edge: give a window model, not a "
        "bucket");
  }
  if (plan.policy_from_headers && plan.policy.IsBucket()) {
    return bad("--from-headers learns a window's limit: a bucket model takes --rate and --burst");
  }
  for (const std::string& text : plan.denied_bodies) {
    if (text.empty()) return bad("--denied-if: body: needs the text to look for");
  }
  if (!std::all_of(plan.user_prefix.begin(), plan.user_prefix.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
      })) {
    return bad("--user-prefix: '" + plan.user_prefix +
               "' may hold only letters, digits, '-', '_' and '.'");
  }
  for (int status : plan.denied_statuses) {
    if (status < 100 || status > 599) {
      return bad(absl::StrCat("--denied-if: ", status, " is not an HTTP status (100 to 599)"));
    }
  }
  if (plan.max_requests < 1 || plan.max_requests > kProbeMostRequests) {
    return bad(
        absl::StrCat("--max-requests: ", plan.max_requests, " is not 1 to ", kProbeMostRequests));
  }
  if (!(plan.max_per_second > 0) || plan.max_per_second > kProbeMostPerSecond) {
    return bad(absl::StrCat("--max-rps: ", plan.max_per_second, " is not above 0 and at most ",
                            kProbeMostPerSecond));
  }
  if (plan.concurrency < 1 || plan.concurrency > 256) {
    return bad(absl::StrCat("--connections: ", plan.concurrency, " is not 1 to 256"));
  }
  if (plan.users < 1 || plan.users > 1'000'000) {
    return bad(absl::StrCat("--users: ", plan.users, " is not 1 to 1000000"));
  }
  if (plan.duration <= Duration(0) || plan.duration > std::chrono::hours(1)) {
    return bad("--duration: " + FormatDuration(plan.duration) + " is not above 0 and at most 1h");
  }
  if (plan.retry_after_wait < Duration(0) || plan.retry_after_wait > std::chrono::minutes(10)) {
    return bad("--retry-after-wait: " + FormatDuration(plan.retry_after_wait) + " is not 0 to 10m");
  }
  if (plan.timeout <= Duration(0) || plan.timeout > std::chrono::minutes(1)) {
    return bad("--timeout: " + FormatDuration(plan.timeout) + " is not above 0 and at most 1m");
  }
  return absl::OkStatus();
}

bool ProbeSends(TrafficKind traffic) {
  return !RowOf<TrafficInfo>(kTrafficKinds, traffic).probe.empty();
}

std::optional<TrafficKind> ProbeTrafficNamed(std::string_view name) {
  const std::optional<TrafficKind> kind = Named<TrafficInfo>(kTrafficKinds, name);
  if (kind && ProbeSends(*kind)) return kind;
  return std::nullopt;
}

std::string ProbeTrafficChoices() {
  return NameChoices<TrafficInfo>(kTrafficKinds,
                                  [](const TrafficInfo& t) { return ProbeSends(t.id); });
}

std::string ProbeUser(const ProbePlan& plan, int64_t i) {
  return absl::StrCat(plan.user_prefix, i);
}

OutgoingRequest ProbeRequest(const ProbePlan& plan, const HttpUrl& url, const std::string& user,
                             int64_t n) {
  OutgoingRequest r;
  r.label = user;
  r.method = plan.method;
  r.target = Filled(url.target, user, n);
  for (const HttpHeader& h : plan.headers) r.headers.push_back({h.name, Filled(h.value, user, n)});
  r.body = Filled(plan.body, user, n);
  return r;
}

int ProbeUsersSent(const ProbePlan& plan) {
  return plan.traffic == TrafficKind::kBoundaryAttack ? 1 : plan.users;
}

std::string DescribeProbePlan(const ProbePlan& plan) {
  std::string out = absl::StrCat("probe: ", plan.method, " ", plan.url, "\n");
  for (const HttpHeader& h : plan.headers) absl::StrAppend(&out, "  ", h.name, ": ", h.value, "\n");
  if (!plan.body.empty()) absl::StrAppend(&out, "  body: ", plan.body, "\n");
  const int users = ProbeUsersSent(plan);
  absl::StrAppend(&out, "  as ", users, " user(s) {user} = ", ProbeUser(plan, 0),
                  users > 1 ? absl::StrCat(" .. ", ProbeUser(plan, users - 1)) : "", ", on ",
                  plan.concurrency, " connection(s)\n");
  absl::StrAppend(&out, "  traffic ", std::string(TrafficKindName(plan.traffic)), ": ",
                  std::string(RowOf<TrafficInfo>(kTrafficKinds, plan.traffic).probe),
                  plan.traffic == TrafficKind::kPoisson ? absl::StrCat(" (seed ", plan.seed, ")")
                  : plan.traffic == TrafficKind::kBurst && plan.burst_size > 0
                      ? absl::StrCat(" (", plan.burst_size, " a burst)")
                      : "",
                  "\n");
  absl::StrAppend(&out, "  at most ", plan.max_requests, " requests, at most ", plan.max_per_second,
                  " in any second, for at most ", FormatDuration(plan.duration), "\n");
  std::string denied;
  for (int status : plan.denied_statuses) {
    absl::StrAppend(&denied, denied.empty() ? "" : " or ", "a ", status);
  }
  for (const std::string& text : plan.denied_bodies) {
    absl::StrAppend(&denied, denied.empty() ? "" : " or ", "a body holding '", text, "'");
  }
  absl::StrAppend(&out, "  ", denied, " is a denial; held to ",
                  plan.policy_from_headers
                      ? absl::StrCat(std::string(AlgorithmName(plan.policy.algorithm)),
                                     " with the limit and window its headers state")
                      : plan.policy.ToString(),
                  " per user\n");
  if (!WhyNoRetryAfterCheck(plan)) {
    absl::StrAppend(&out, "  then Retry-After retried on 2 users of their own, when it is at most ",
                    FormatDuration(plan.retry_after_wait), "\n");
  }
  return out;
}

}  // namespace ratelab
