#include "sim/probe_run.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "impl/service/structured_fields.h"
#include "judge/checks.h"
#include "sim/random.h"

namespace ratelab {

namespace {

// The time a server is taken to see: whole milliseconds (what most read), so that a decision
// taken at a floored instant is never judged outside its interval.
constexpr Duration kProbeResolution = std::chrono::milliseconds(1);

std::vector<std::string> KeptHeaders() {
  return {std::begin(kProbeHeaders), std::end(kProbeHeaders)};
}

// Exchanges a finding lists as its examples.
constexpr size_t kExamples = 3;

std::string Filled(const std::string& text, const std::string& user, int64_t n) {
  return absl::StrReplaceAll(text, {{"{user}", user}, {"{n}", absl::StrCat(n)}});
}

// A non-negative decimal integer, all of `text`.
std::optional<int64_t> Whole(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text[0] == '-' || std::from_chars(text.data(), end, v).ptr != end) {
    return std::nullopt;
  }
  return v;
}

enum class Kind { kAdmitted, kDenied, kServerError, kUnanswered, kOther };

Kind KindOf(const ProbePlan& plan, const HttpExchange& e) {
  if (!e.answered_ok()) return Kind::kUnanswered;
  for (const std::string& text : plan.denied_bodies) {
    if (e.body.find(text) != std::string::npos) return Kind::kDenied;
  }
  if (std::find(plan.denied_statuses.begin(), plan.denied_statuses.end(), e.status) !=
      plan.denied_statuses.end()) {
    return Kind::kDenied;
  }
  if (e.status >= 200 && e.status < 400) return Kind::kAdmitted;
  if (e.status >= 500) return Kind::kServerError;
  return Kind::kOther;
}

// Whether `plan`'s load needs an answer before it starts: boundary traffic aims at the edge it
// names, and bursts are sized by the limit the headers state.
bool NeedsFirstLook(const ProbePlan& plan) {
  return plan.traffic == ProbeTraffic::kBoundary ||
         (plan.traffic == ProbeTraffic::kBursts && plan.policy_from_headers &&
          plan.burst_size == 0);
}

constexpr char kNoPolicyInHeaders[] =
    "--from-headers: no answer had RateLimit-Policy, X-RateLimit-Limit or RateLimit-Limit to learn "
    "the limit from; give --limit and --window";

// Findings gathered by check: how many exchanges show each, and the first few.
class Findings {
 public:
  // An exchange counts once for a check, however many of its headers show it.
  void Add(std::string_view check, int64_t n, std::string example) {
    Entry& e = entries_[std::string(check)];
    if (e.count > 0 && e.last == n) return;
    if (e.count++ == 0) e.first = std::move(example);
    e.last = n;
    if (e.exchanges.size() < kExamples) e.exchanges.push_back(n);
  }
  std::vector<ProbeFinding> Take(int64_t answers) {
    std::vector<ProbeFinding> out;
    for (auto& [check, e] : entries_) {
      out.push_back({check, absl::StrCat(e.count, " of ", answers, " answers: ", e.first),
                     std::move(e.exchanges)});
    }
    return out;
  }

 private:
  struct Entry {
    int64_t count = 0;
    int64_t last = 0;  // the exchange last added
    std::string first;
    std::vector<int64_t> exchanges;
  };
  std::map<std::string, Entry> entries_;
};

// The requests the Retry-After check sends one of its two users until it is denied: enough to
// spend the limit and a few more.
int64_t RetryAfterTries(const Policy& policy) { return policy.limit + 3; }

// The requests the Retry-After check may send for `policy`: for each of its two users, its tries
// and the retry.
int64_t RetryAfterBudget(const Policy& policy) { return 2 * (RetryAfterTries(policy) + 1); }

// The most tries the Retry-After check makes a user (it sends them one at a time, so a larger
// limit would take it far past the load's duration).
constexpr int64_t kRetryAfterMostTries = 100;

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

// A reset header this large is a unix time (2001 on), not seconds from now.
constexpr int64_t kUnixSecondsFrom = 1'000'000'000;

// The longest the model makes anyone wait, in whole seconds rounded up, and one more for the
// server's own rounding (Policy::LongestRestore).
int64_t LongestWaitSeconds(const Policy& policy) {
  return std::chrono::ceil<std::chrono::seconds>(policy.LongestRestore()).count() + 1;
}

// What the answer's rate-limit headers say, checked against their grammar and the model: the
// Remaining it states, if any.
std::optional<int64_t> CheckStateHeaders(const ProbePlan& plan, const HttpExchange& e,
                                         Decision& decision, Findings& findings) {
  const std::string at = absl::StrCat("#", e.n, " ");
  const auto integer_header = [&](std::string_view name) -> std::optional<int64_t> {
    const std::optional<std::string_view> value = FindHeader(e.headers, name);
    if (!value) return std::nullopt;
    std::optional<int64_t> v = Whole(*value);
    if (!v) {
      findings.Add("header-syntax", e.n,
                   absl::StrCat(at, std::string(name), ": '", std::string(*value),
                                "' is not a whole number"));
    }
    return v;
  };
  // The legacy fields, and draft 6's (express-rate-limit sends either or both).
  if (std::optional<int64_t> limit = integer_header("X-RateLimit-Limit")) decision.limit = *limit;
  std::optional<int64_t> remaining = integer_header("X-RateLimit-Remaining");
  integer_header("RateLimit-Limit");
  if (std::optional<int64_t> r = integer_header("RateLimit-Remaining"); r && !remaining) {
    remaining = r;
  }
  // When the allowance is back: never in the past, never later than the model ever waits. A
  // value that large is unix seconds, else seconds from now.
  const int64_t longest = LongestWaitSeconds(plan.policy);
  const int64_t sent_s = ToUnixNanos(e.sent) / 1'000'000'000;
  const int64_t answered_s = ToUnixNanos(e.answered) / 1'000'000'000 + 1;
  const auto check_reset = [&](std::string_view name, std::optional<int64_t> value) {
    if (!value) return;
    const bool unix_time = *value >= kUnixSecondsFrom;
    const int64_t from_now = unix_time ? *value - answered_s : *value;
    if (unix_time && *value < sent_s - 1) {
      findings.Add("reset-in-the-past", e.n,
                   absl::StrCat(at, std::string(name), ": ", *value, " is ", sent_s - *value,
                                " s before the request was sent"));
    } else if (from_now > longest) {
      findings.Add("reset-beyond-model", e.n,
                   absl::StrCat(at, std::string(name), ": ", *value, " is ", from_now,
                                " s ahead, but the model is whole again within ", longest, " s"));
    }
  };
  check_reset("X-RateLimit-Reset", integer_header("X-RateLimit-Reset"));
  check_reset("RateLimit-Reset", integer_header("RateLimit-Reset"));
  if (const std::optional<std::string_view> value = FindHeader(e.headers, "RateLimit-Policy")) {
    if (Result<std::vector<RateLimitPolicyField>> p = ParseAnyRateLimitPolicy(*value); !p.ok()) {
      findings.Add("header-syntax", e.n,
                   absl::StrCat(at, "RateLimit-Policy: ", p.status().message()));
    }
  }
  if (const std::optional<std::string_view> value = FindHeader(e.headers, "RateLimit")) {
    Result<std::vector<RateLimitField>> r = ParseAnyRateLimit(*value);
    if (!r.ok()) {
      findings.Add("header-syntax", e.n, absl::StrCat(at, "RateLimit: ", r.status().message()));
    } else if (!r->empty()) {
      if (!remaining) remaining = r->front().remaining;
      check_reset("RateLimit's t", r->front().reset);
    }
  }
  if (remaining) decision.remaining = *remaining;
  return remaining;
}

// A denial's Retry-After: present, whole seconds (or an HTTP-date), no longer than the model
// ever waits.
void CheckRetryAfter(const ProbePlan& plan, const HttpExchange& e, Decision& decision,
                     Findings& findings) {
  const std::string at = absl::StrCat("#", e.n, " ");
  const int64_t longest = LongestWaitSeconds(plan.policy);
  const std::optional<std::string_view> retry = FindHeader(e.headers, "Retry-After");
  if (!retry) {
    findings.Add("retry-after-missing", e.n,
                 absl::StrCat(at, "a ", e.status, " without Retry-After"));
    return;
  }
  const std::optional<int64_t> seconds = Whole(*retry);
  if (!seconds) {
    // RFC 9110 allows an HTTP-date too ("Fri, 31 Dec 1999 23:59:59 GMT").
    if (!retry->ends_with(" GMT")) {
      findings.Add("header-syntax", e.n,
                   absl::StrCat(at, "Retry-After: '", std::string(*retry),
                                "' is neither whole seconds nor an HTTP-date"));
    }
    return;
  }
  decision.retry_after = std::chrono::seconds(*seconds);
  if (*seconds > longest) {
    findings.Add(
        "retry-after-too-long", e.n,
        absl::StrCat(at, "Retry-After: ", *seconds, ", but the model never waits more than ",
                     longest, " s (milliseconds given for seconds?)"));
  }
}

// Whether the model's allowance comes back whole at the window's end and never before it (so a
// Remaining may rise only at the reset the server names).
bool RisesOnlyAtTheReset(Algorithm algorithm) {
  return algorithm == Algorithm::kFixedWindow || algorithm == Algorithm::kAnchoredWindow;
}

// A decision's exchange (by index) and the Remaining its answer stated.
struct StatedRemaining {
  size_t exchange;
  int64_t remaining;
  bool admitted;
};

// Which admissions a model's Remaining must have spent: for a sliding log, those in its window
// at the decision; for a fixed or anchored window, those in the window the answer's own reset
// closes; for counters and buckets none beyond the answer's own (a share of an admission, or a
// refill, comes back by itself).
enum class Counted { kNone, kInTheLog, kInTheResetsWindow };

Counted CountedBy(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      return Counted::kInTheLog;
    case Algorithm::kFixedWindow:
    case Algorithm::kAnchoredWindow:
      return Counted::kInTheResetsWindow;
    default:
      return Counted::kNone;
  }
}

// The most admissions of one span counted for a Remaining: beyond it the count stops short,
// which only makes the bound looser.
constexpr size_t kMostCounted = 10'000;

// One user's Remaining is never above what the model's limit leaves after the admissions that
// surely came first (answered before the answer was sent) and surely count at its decision
// (sent after its span began, wherever each fell), and its own. `admitted`: the user's
// admissions (exchange indices), in the order they were sent.
void CheckRemainingAgainstAdmissions(const Policy& policy,
                                     const std::vector<HttpExchange>& exchanges,
                                     const std::vector<size_t>& admitted,
                                     const std::vector<StatedRemaining>& stated,
                                     Findings& findings) {
  const Counted counted = CountedBy(policy.algorithm);
  for (const StatedRemaining& b : stated) {
    const HttpExchange& eb = exchanges[b.exchange];
    // An admission sent at or after this counts, even on a server that floors its time.
    std::optional<Instant> from;
    if (counted == Counted::kInTheLog) from = eb.answered - policy.window + kProbeResolution;
    if (counted == Counted::kInTheResetsWindow) {
      if (std::optional<std::pair<Instant, Instant>> edge = WindowEdgeFromHeaders(eb)) {
        from = edge->second - policy.window + kProbeResolution;
      }
    }
    std::vector<int64_t> before;
    if (from) {
      auto a = std::lower_bound(admitted.begin(), admitted.end(), *from,
                                [&](size_t i, Instant t) { return exchanges[i].sent < t; });
      for (; a != admitted.end() && exchanges[*a].sent < eb.sent && before.size() < kMostCounted;
           ++a) {
        if (exchanges[*a].answered < eb.sent) before.push_back(exchanges[*a].n);
      }
    }
    const int64_t spent = static_cast<int64_t>(before.size()) + (b.admitted ? 1 : 0);
    const int64_t most = std::max<int64_t>(0, policy.limit - spent);
    if (b.remaining <= most) continue;
    std::string which;
    for (size_t i = 0; i < before.size() && i < kExamples; ++i) {
      absl::StrAppend(&which, i == 0 ? " (#" : ", #", before[i]);
    }
    if (!which.empty()) absl::StrAppend(&which, before.size() > kExamples ? ", ...)" : ")");
    findings.Add(
        "remaining-above-model", eb.n,
        absl::StrCat("#", eb.n, " says ", b.remaining, " remain",
                     b.admitted ? " after an admission" : "", ", but the model's limit ",
                     policy.limit,
                     before.empty() ? ""
                                    : absl::StrCat(" less the ", before.size(),
                                                   " admissions surely counted before it", which),
                     " leaves at most ", most));
  }
}

// One user's Remaining never rises before the reset the server named: for each answer b, the
// answer a last settled before b was sent (a answered first, so a decided first) must state no
// less than b when b was answered before a's reset could come (at its earliest, the reset
// header rounded either way) and both state the same limit.
void CheckRemainingNeverRises(const std::vector<HttpExchange>& exchanges,
                              std::vector<StatedRemaining>& stated, Findings& findings) {
  const auto sent = [&](const StatedRemaining& s) { return exchanges[s.exchange].sent; };
  const auto answered = [&](const StatedRemaining& s) { return exchanges[s.exchange].answered; };
  std::vector<StatedRemaining> by_answer = stated;
  std::sort(stated.begin(), stated.end(),
            [&](const auto& x, const auto& y) { return sent(x) < sent(y); });
  std::sort(by_answer.begin(), by_answer.end(),
            [&](const auto& x, const auto& y) { return answered(x) < answered(y); });
  size_t settled = 0;  // how many of by_answer were answered before the current one was sent
  for (const StatedRemaining& b : stated) {
    while (settled < by_answer.size() && answered(by_answer[settled]) < sent(b)) ++settled;
    if (settled == 0) continue;
    const StatedRemaining& a = by_answer[settled - 1];
    const HttpExchange& ea = exchanges[a.exchange];
    const HttpExchange& eb = exchanges[b.exchange];
    const std::optional<std::pair<Instant, Instant>> reset = WindowEdgeFromHeaders(ea);
    if (b.remaining <= a.remaining || !reset || eb.answered >= reset->first ||
        FindHeader(ea.headers, "X-RateLimit-Limit") !=
            FindHeader(eb.headers, "X-RateLimit-Limit")) {
      continue;
    }
    findings.Add("remaining-rose", eb.n,
                 absl::StrCat("#", eb.n, " says ", b.remaining, " remain, more than the ",
                              a.remaining, " #", ea.n, " said, yet it was sent after #", ea.n,
                              " was answered and answered before the reset #", ea.n,
                              " named (counts lost, or a window not as stated)"));
  }
}

}  // namespace

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
  if (plan.traffic == ProbeTraffic::kBoundary && plan.policy.IsBucket()) {
    return bad("--traffic boundary aims at a window's edge: give a window model, not a bucket");
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
    return bad(absl::StrCat("--concurrency: ", plan.concurrency, " is not 1 to 256"));
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

const ProbeTrafficInfo& Describe(ProbeTraffic traffic) {
  for (const ProbeTrafficInfo& t : kProbeTraffic) {
    if (t.traffic == traffic) return t;
  }
  return kProbeTraffic[0];
}

std::optional<ProbeTraffic> ProbeTrafficNamed(std::string_view name) {
  for (const ProbeTrafficInfo& t : kProbeTraffic) {
    if (t.name == name) return t.traffic;
  }
  return std::nullopt;
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

std::optional<std::pair<Instant, Instant>> WindowEdgeFromHeaders(const HttpExchange& e) {
  std::optional<int64_t> value;
  if (const std::optional<std::string_view> text = FindHeader(e.headers, "RateLimit")) {
    if (Result<std::vector<RateLimitField>> r = ParseAnyRateLimit(*text); r.ok() && !r->empty()) {
      value = r->front().reset;
    }
  }
  for (std::string_view name : {"RateLimit-Reset", "X-RateLimit-Reset"}) {
    if (const std::optional<std::string_view> text = FindHeader(e.headers, name); text && !value) {
      value = Whole(*text);
    }
  }
  if (!value) return std::nullopt;
  // Rounded up, down or to the nearest: the edge is within a second either side.
  const Duration second = std::chrono::seconds(1);
  if (*value >= kUnixSecondsFrom) {
    const Instant at = FromUnixNanos(*value * 1'000'000'000);
    return std::pair(at - second, at + second);
  }
  return std::pair(e.sent + std::chrono::seconds(*value) - second,
                   e.answered + std::chrono::seconds(*value) + second);
}

Result<std::vector<ProbeSlot>> ProbeSchedule(const ProbePlan& plan, const Policy& policy,
                                             int64_t most, const std::optional<ProbeEdge>& edge) {
  std::vector<ProbeSlot> out;
  const auto add = [&](Duration at, int64_t user) {
    if (static_cast<int64_t>(out.size()) >= most || at >= plan.duration) return false;
    out.push_back({at, user});
    return true;
  };
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
  };
  switch (plan.traffic) {
    case ProbeTraffic::kSteady:
      for (int64_t n = 0;
           add(seconds(static_cast<double>(n) / plan.max_per_second), n % plan.users); ++n) {
      }
      break;
    case ProbeTraffic::kPoisson: {
      Random random(plan.seed);
      const Duration mean_gap = seconds(2 / plan.max_per_second);
      for (Duration at{}; add(at, random.Uniform(0, plan.users));
           at += random.Exponential(mean_gap)) {
      }
      break;
    }
    case ProbeTraffic::kBursts: {
      const int64_t size = plan.burst_size > 0 ? plan.burst_size : 2 * policy.limit;
      const Duration every =
          std::max<Duration>(policy.ClaimWindow() / plan.users, std::chrono::milliseconds(10));
      for (int64_t b = 0;; ++b) {
        for (int64_t i = 0; i < size; ++i) {
          if (!add(b * every, b % plan.users)) return out;
        }
      }
    }
    case ProbeTraffic::kBoundary: {
      if (!edge) return absl::InternalError("boundary traffic without the window's edge");
      // The limit spread over `spread` just before the edge could be, and again just after:
      // all of it in a span the window's length holds, with half a second to spare.
      const Duration unsure = edge->latest - edge->earliest;
      const Duration spare = std::chrono::milliseconds(500);
      const Duration least_spread = std::chrono::milliseconds(100);
      const Duration spread =
          std::min<Duration>(std::chrono::seconds(1), (policy.window - unsure - spare) / 2);
      if (policy.IsBucket()) return absl::InternalError("boundary traffic on a bucket model");
      if (spread < least_spread) {
        return absl::FailedPreconditionError(
            absl::StrCat("boundary traffic needs a window of at least ",
                         FormatDuration(unsure + spare + 2 * least_spread),
                         ": the server's reset header leaves its edge ", FormatDuration(unsure),
                         " unsure, and the attack must fit in one window"));
      }
      if (edge->latest + spread > plan.duration) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the server's window ends ", FormatDuration(edge->latest),
            " after the start, but --duration is ", FormatDuration(plan.duration),
            ": boundary traffic needs --duration ",
            FormatDuration(std::chrono::ceil<std::chrono::seconds>(edge->latest + 2 * spread)),
            " or more"));
      }
      const int64_t side = policy.limit;
      for (int64_t i = 0; i < side; ++i) add(edge->earliest - spread + i * spread / side, 0);
      for (int64_t i = 0; i < side; ++i) add(edge->latest + i * spread / side, 0);
      break;
    }
  }
  return out;
}

std::string DescribeProbePlan(const ProbePlan& plan) {
  std::string out = absl::StrCat("probe: ", plan.method, " ", plan.url, "\n");
  for (const HttpHeader& h : plan.headers) absl::StrAppend(&out, "  ", h.name, ": ", h.value, "\n");
  if (!plan.body.empty()) absl::StrAppend(&out, "  body: ", plan.body, "\n");
  const int users = plan.traffic == ProbeTraffic::kBoundary ? 1 : plan.users;
  absl::StrAppend(&out, "  as ", users, " user(s) {user} = ", ProbeUser(plan, 0),
                  users > 1 ? absl::StrCat(" .. ", ProbeUser(plan, users - 1)) : "", ", on ",
                  plan.concurrency, " connection(s)\n");
  absl::StrAppend(&out, "  traffic ", std::string(Describe(plan.traffic).name), ": ",
                  std::string(Describe(plan.traffic).summary),
                  plan.traffic == ProbeTraffic::kPoisson ? absl::StrCat(" (seed ", plan.seed, ")")
                  : plan.traffic == ProbeTraffic::kBursts && plan.burst_size > 0
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
                      ? absl::StrCat(std::string(Describe(plan.policy.algorithm).name),
                                     " with the limit and window its headers state")
                      : plan.policy.ToString(),
                  " per user\n");
  if (!WhyNoRetryAfterCheck(plan)) {
    absl::StrAppend(&out, "  then Retry-After retried on 2 users of their own, when it is at most ",
                    FormatDuration(plan.retry_after_wait), "\n");
  }
  return out;
}

std::optional<Policy> PolicyFromHeaders(const Policy& model,
                                        const std::vector<HttpExchange>& exchanges) {
  for (const HttpExchange& e : exchanges) {
    if (std::optional<std::string_view> text = FindHeader(e.headers, "RateLimit-Policy")) {
      Result<std::vector<RateLimitPolicyField>> p = ParseAnyRateLimitPolicy(*text);
      if (p.ok() && !p->empty() && p->front().quota > 0) {
        const Duration window =
            p->front().window ? Duration(std::chrono::seconds(*p->front().window)) : model.window;
        return Policy::Window(model.algorithm, p->front().quota, window);
      }
    }
    for (std::string_view name : {"X-RateLimit-Limit", "RateLimit-Limit"}) {
      if (std::optional<std::string_view> text = FindHeader(e.headers, name)) {
        if (std::optional<int64_t> limit = Whole(*text); limit && *limit > 0) {
          return Policy::Window(model.algorithm, *limit, model.window);
        }
      }
    }
  }
  return std::nullopt;
}

Result<ProbeResult> JudgeProbe(const ProbePlan& given, std::vector<HttpExchange> exchanges) {
  ProbePlan plan = given;
  if (plan.policy_from_headers) {
    std::optional<Policy> learnt = PolicyFromHeaders(plan.policy, exchanges);
    if (!learnt) {
      return absl::FailedPreconditionError(kNoPolicyInHeaders);
    }
    plan.policy = *learnt;
  }
  ProbeResult r;
  r.policy = plan.policy;
  r.exchanges = std::move(exchanges);
  Findings findings;
  std::vector<Duration> latencies;
  int64_t answers = 0;
  std::map<std::string, std::vector<StatedRemaining>> stated;  // by user
  std::map<std::string, std::vector<size_t>> admitted;         // by user
  for (size_t i = 0; i < r.exchanges.size(); ++i) {
    const HttpExchange& e = r.exchanges[i];
    const Kind kind = KindOf(plan, e);
    HistoryEvent& event = r.history.emplace_back();
    event.id = static_cast<int64_t>(i);
    event.key = e.label;
    event.invoke = e.sent;
    event.complete = e.answered;
    switch (kind) {
      case Kind::kAdmitted:
        ++r.admitted;
        break;
      case Kind::kDenied:
        ++r.denied;
        break;
      case Kind::kServerError:
        ++r.server_errors;
        findings.Add("server-errors", e.n,
                     absl::StrCat("#", e.n, " ", e.status, " (a limiter that fails under load?)"));
        break;
      case Kind::kUnanswered:
        ++r.unanswered;
        break;
      case Kind::kOther:
        ++r.other;
        break;
    }
    if (kind == Kind::kUnanswered) continue;
    ++answers;
    latencies.push_back(e.answered - e.sent);
    Decision d;
    d.allowed = kind == Kind::kAdmitted;
    d.limit = plan.policy.limit;
    const std::optional<int64_t> remaining = CheckStateHeaders(plan, e, d, findings);
    if (kind == Kind::kDenied) CheckRetryAfter(plan, e, d, findings);
    // Only an admission or a denial is a decision; anything else may or may not have counted.
    if (kind == Kind::kAdmitted || kind == Kind::kDenied) {
      event.decision = d;
      if (remaining) stated[e.label].push_back({i, *remaining, kind == Kind::kAdmitted});
      if (kind == Kind::kAdmitted) admitted[e.label].push_back(i);
    }
  }
  for (auto& [user, of_user] : admitted) {
    std::sort(of_user.begin(), of_user.end(),
              [&](size_t x, size_t y) { return r.exchanges[x].sent < r.exchanges[y].sent; });
  }
  for (const auto& [user, of_user] : stated) {
    CheckRemainingAgainstAdmissions(plan.policy, r.exchanges, admitted[user], of_user, findings);
  }
  if (RisesOnlyAtTheReset(plan.policy.algorithm)) {
    for (auto& [user, answers_of_user] : stated) {
      CheckRemainingNeverRises(r.exchanges, answers_of_user, findings);
    }
  }
  r.findings = findings.Take(answers);
  r.latency_p50 = Percentile(latencies, 50);
  r.latency_p99 = Percentile(latencies, 99);
  r.promise = std::string(PromiseInvariant(plan.policy.algorithm));
  const History judged = AtResolution(r.history, kProbeResolution);
  r.violations = JudgePromiseOverIntervals(r.history, judged, plan.policy, kProbeResolution);
  // The server decides each request on its own clock as it handles it: the instants it saw
  // follow the order its decisions took effect in. Its clock's resolution is not known: to the
  // nanosecond, or as coarse as kProbeResolution, when it may see an instant up to that much
  // before the request was sent (floor(t)). Both are tried.
  History early = r.history;
  for (HistoryEvent& e : early) e.invoke -= kProbeResolution - Duration(1);
  r.linearizability = JudgeLinearizability(early, plan.policy, Duration(1), DecisionClock::kStore);
  if (r.linearizability.violation) {
    Violation& v = *r.linearizability.violation;
    for (HistoryEvent& e : v.witness) e = r.history[static_cast<size_t>(e.id)];
    v.summary += " (its clock to the nanosecond or to the " + FormatDuration(kProbeResolution) +
                 ", unknown)";
  }
  return r;
}

namespace {

// The load's options for `plan`: its connections, caps and timeout, and the headers it reads.
HttpLoadOptions LoadOptions(const ProbePlan& plan, const HttpUrl& url) {
  HttpLoadOptions options;
  options.url = url;
  options.connections = plan.concurrency;
  options.max_requests = plan.max_requests;
  options.max_per_second = plan.max_per_second;
  options.duration = plan.duration;
  options.timeout = plan.timeout;
  options.kept_headers = KeptHeaders();
  return options;
}

// `request`, sent at once on a connection of its own: its exchange (which says why, when there
// was no answer), numbered by the request's {n}.
HttpExchange SendOne(const ProbePlan& plan, const HttpUrl& url, const Clock& clock,
                     const OutgoingRequest& request, int64_t n) {
  HttpLoadOptions o = LoadOptions(plan, url);
  o.connections = 1;
  o.max_requests = 1;
  o.duration = plan.timeout + std::chrono::seconds(1);
  Result<std::vector<HttpExchange>> sent = RunHttpLoad(o, clock, [&](int64_t) { return request; });
  HttpExchange e;
  if (sent.ok() && !sent->empty()) e = std::move(sent->front());
  if (!sent.ok()) e.error = std::string(sent.status().message());
  e.n = n;
  e.label = request.label;
  return e;
}

// Sleeps until `t`, or until `stop` says to stop.
void WaitUntil(const Clock& clock, Instant t, const std::function<bool()>& stop) {
  for (Instant now = clock.Now(); now < t && !(stop && stop()); now = clock.Now()) {
    std::this_thread::sleep_for(std::min<Duration>(t - now, std::chrono::milliseconds(50)));
  }
}

// Retry-After's honesty, after the load, on two users of their own (so nothing else spends
// their allowance): each is sent requests one at a time until denied. The first is sent one
// more request clearly before its Retry-After is up (a second before the wait rounded up could
// end, and half a second more), which must be denied; the second one just after it is up,
// which must be admitted. Skipped, with a note saying why, when the wait is longer than
// `plan.retry_after_wait`, under 2 s (nothing is clearly earlier), or the server is slow to
// answer.
class RetryAfterCheck {
 public:
  RetryAfterCheck(const ProbePlan& plan, const Policy& policy, const HttpUrl& url,
                  const Clock& clock, int64_t first_n, std::function<bool()> stop)
      : plan_(plan),
        policy_(policy),
        url_(url),
        clock_(clock),
        next_n_(first_n),
        stop_(std::move(stop)) {}

  void Run() {
    for (const bool early : {true, false}) {
      note.clear();
      Check(plan_.user_prefix + (early ? "retry-early" : "retry-on-time"), early);
      if (note.empty()) {
        ++checked;
      } else {
        notes.push_back(absl::StrCat(early ? "early" : "on time", ": ", note));
      }
    }
  }

  std::vector<HttpExchange> exchanges;
  std::vector<ProbeFinding> findings;
  int checked = 0;                 // retries made: early, on time
  std::vector<std::string> notes;  // why a retry was not made

 private:
  std::string note;  // why the retry being checked is not made

  // The next request for `user`, sent when the rate cap allows: its exchange.
  const HttpExchange& Send(const std::string& user) {
    if (!exchanges.empty()) {
      WaitUntil(exchanges.back().sent +
                std::chrono::duration_cast<Duration>(
                    std::chrono::duration<double>(1.0 / plan_.max_per_second)));
    }
    const int64_t n = next_n_++;
    return exchanges.emplace_back(
        SendOne(plan_, url_, clock_, ProbeRequest(plan_, url_, user, n), n));
  }

  void WaitUntil(Instant t) { ratelab::WaitUntil(clock_, t, stop_); }

  void Check(const std::string& user, bool early) {
    const HttpExchange* denial = nullptr;
    for (int64_t i = 0; i < RetryAfterTries(policy_) && denial == nullptr; ++i) {
      const HttpExchange& e = Send(user);
      const Kind kind = KindOf(plan_, e);
      if (kind == Kind::kDenied) denial = &e;
      if (kind != Kind::kDenied && kind != Kind::kAdmitted) {
        note = absl::StrCat("#", e.n, " was neither an admission nor a denial");
        return;
      }
    }
    if (denial == nullptr) {
      note = absl::StrCat(user, " was not denied in ", RetryAfterTries(policy_), " requests");
      return;
    }
    const std::optional<std::string_view> header = FindHeader(denial->headers, "Retry-After");
    const std::optional<int64_t> wait = header ? Whole(*header) : std::nullopt;
    if (!wait) {
      note = absl::StrCat("#", denial->n, " had no Retry-After in whole seconds");
      return;
    }
    if (std::chrono::seconds(*wait) > plan_.retry_after_wait) {
      note = absl::StrCat("#", denial->n, " said Retry-After: ", *wait, ", longer than ",
                          FormatDuration(plan_.retry_after_wait), " (--retry-after-wait)");
      return;
    }
    if (early && *wait < 2) {
      note = absl::StrCat("#", denial->n, " said Retry-After: ", *wait,
                          ", too short for a retry clearly before it");
      return;
    }
    if (denial->answered - denial->sent > std::chrono::milliseconds(250)) {
      note = absl::StrCat("#", denial->n, " took over 250 ms to answer");
      return;
    }
    const int64_t denial_n = denial->n;
    const Instant answered = denial->answered;
    // The wait the server meant is over `wait` - 1 s, counted from no earlier than it was sent.
    const Duration at = early ? std::chrono::seconds(*wait - 1) - std::chrono::milliseconds(500)
                              : std::chrono::seconds(*wait) + std::chrono::milliseconds(100);
    WaitUntil(answered + at);
    const HttpExchange& retry = Send(user);
    const Kind kind = KindOf(plan_, retry);
    if (early && kind == Kind::kAdmitted) {
      findings.push_back(
          {"retry-after-dishonest",
           absl::StrCat("#", retry.n, " was admitted ", FormatDuration(at), " after #", denial_n,
                        " said Retry-After: ", *wait, " (a wait it did not need)"),
           {denial_n, retry.n}});
    } else if (!early && kind == Kind::kDenied) {
      findings.push_back({"retry-after-dishonest",
                          absl::StrCat("#", retry.n, " was denied again ", FormatDuration(at),
                                       " after #", denial_n, " said Retry-After: ", *wait),
                          {denial_n, retry.n}});
    }
  }

  const ProbePlan& plan_;
  const Policy& policy_;
  const HttpUrl& url_;
  const Clock& clock_;
  int64_t next_n_;
  std::function<bool()> stop_;
};

}  // namespace

Result<ProbeResult> RunProbe(const ProbePlan& plan, const Clock& clock,
                             const ProbeProgress& progress, const std::function<bool()>& stop) {
  if (Status s = CheckProbePlan(plan); !s.ok()) return s;
  const HttpUrl url = *ParseHttpUrl(plan.url);
  const std::optional<std::string> no_retry_check = WhyNoRetryAfterCheck(plan);
  bool interrupted = false;
  const auto asked_to_stop = [&] { return interrupted = interrupted || (stop && stop()); };
  const Instant start = clock.Now();
  std::vector<HttpExchange> exchanges;
  Policy policy = plan.policy;
  std::optional<std::pair<Instant, Instant>> edge;
  // The first look: one request for the first user. An edge too near to aim at (the attack
  // starts up to a second and a bit before it) is let pass, and the next window looked at.
  for (int look = 0; NeedsFirstLook(plan) && look < 2 && !edge; ++look) {
    const int64_t n = static_cast<int64_t>(exchanges.size());
    const HttpExchange& e = exchanges.emplace_back(
        SendOne(plan, url, clock, ProbeRequest(plan, url, ProbeUser(plan, 0), n), n));
    if (!e.answered_ok()) {
      return absl::UnavailableError(absl::StrCat("the first request had no answer: ", e.error));
    }
    if (plan.policy_from_headers) {
      const std::optional<Policy> learnt = PolicyFromHeaders(plan.policy, exchanges);
      if (!learnt) return absl::FailedPreconditionError(kNoPolicyInHeaders);
      policy = *learnt;
    }
    if (plan.traffic != ProbeTraffic::kBoundary) break;
    edge = WindowEdgeFromHeaders(e);
    if (!edge) {
      return absl::FailedPreconditionError(absl::StrCat(
          "boundary traffic aims at the window edge the server's reset header names, but #", n,
          " had none (RateLimit's t, RateLimit-Reset or X-RateLimit-Reset)"));
    }
    if (look == 0 && edge->first - clock.Now() < std::chrono::milliseconds(1200)) {
      WaitUntil(clock, edge->second + std::chrono::milliseconds(100), asked_to_stop);
      edge.reset();
    }
  }
  // The schedule counts from the probe's start, so that --duration and the edge read as the
  // user gave them; the load, from its own, after the first look.
  HttpLoadOptions options = LoadOptions(plan, url);
  const Duration looked = clock.Now() - start;
  options.duration = plan.duration - looked;
  options.max_requests = plan.max_requests - static_cast<int64_t>(exchanges.size()) -
                         (no_retry_check ? 0 : RetryAfterBudget(plan.policy));
  const std::optional<ProbeEdge> aim =
      edge ? std::optional<ProbeEdge>({edge->first - start, edge->second - start}) : std::nullopt;
  Result<std::vector<ProbeSlot>> schedule =
      interrupted ? std::vector<ProbeSlot>()
                  : ProbeSchedule(plan, policy, options.max_requests, aim);
  if (!schedule.ok()) return schedule.status();
  for (const ProbeSlot& slot : *schedule) {
    options.schedule.push_back(std::max(Duration(0), slot.at - looked));
  }
  const int64_t first_n = static_cast<int64_t>(exchanges.size());
  Result<std::vector<HttpExchange>> load = RunHttpLoad(
      options, clock,
      [&](int64_t n) {
        return ProbeRequest(plan, url, ProbeUser(plan, (*schedule)[static_cast<size_t>(n)].user),
                            first_n + n);
      },
      progress, asked_to_stop);
  if (!load.ok()) return load.status();
  for (HttpExchange& e : *load) {
    e.n += first_n;
    exchanges.push_back(std::move(e));
  }
  const Duration elapsed = clock.Now() - start;
  if (exchanges.empty()) return absl::UnavailableError("no request was sent");
  const auto answered = std::find_if(exchanges.begin(), exchanges.end(),
                                     [](const HttpExchange& e) { return e.answered_ok(); });
  if (answered == exchanges.end()) {
    return absl::UnavailableError(
        absl::StrCat("not one of ", exchanges.size(),
                     " requests was answered; the first: ", exchanges.front().error));
  }
  const int64_t first_retry_n = exchanges.back().n + 1;
  Result<ProbeResult> judged = JudgeProbe(plan, std::move(exchanges));
  if (!judged.ok()) return judged.status();
  ProbeResult& r = *judged;
  r.start = start;
  r.elapsed = elapsed;
  r.interrupted = interrupted;
  if (r.admitted + r.denied == 0) {
    std::map<int, int64_t> statuses;
    for (const HttpExchange& e : r.exchanges) {
      if (e.answered_ok()) ++statuses[e.status];
    }
    std::string seen;
    for (const auto& [status, count] : statuses) {
      absl::StrAppend(&seen, seen.empty() ? "" : ", ", count, " x ", status);
    }
    return absl::FailedPreconditionError(
        "no answer was an admission (2xx, 3xx) or a denial, so nothing can be judged: " + seen +
        " (check the URL, --method, --header and --body; --denied-if names other denial "
        "statuses)");
  }
  if (no_retry_check) {
    r.retry_after_note = *no_retry_check;
  } else if (!interrupted) {
    RetryAfterCheck retry(plan, r.policy, url, clock, first_retry_n, asked_to_stop);
    retry.Run();
    r.retry_after_note = absl::StrJoin(retry.notes, "; ");
    r.retry_after_checked = retry.checked > 0;
    r.retry_after_requests = static_cast<int64_t>(retry.exchanges.size());
    std::move(retry.exchanges.begin(), retry.exchanges.end(), std::back_inserter(r.exchanges));
    std::move(retry.findings.begin(), retry.findings.end(), std::back_inserter(r.findings));
    r.elapsed = clock.Now() - start;
    r.interrupted = interrupted;
  }
  return judged;
}

}  // namespace ratelab
