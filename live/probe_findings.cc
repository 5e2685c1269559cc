#include "live/probe_findings.h"

#include <algorithm>
#include <charconv>

#include "absl/strings/str_cat.h"
#include "impl/service/structured_fields.h"
#include "model/named.h"

namespace ratelab {

namespace {

// Exchanges a finding lists as its examples.
constexpr size_t kExamples = 3;

// A reset header this large is a unix time (2001 on), not seconds from now.
constexpr int64_t kUnixSecondsFrom = 1'000'000'000;

// The longest the model makes anyone wait, in whole seconds rounded up, and one more for the
// server's own rounding (Policy::LongestRestore).
int64_t LongestWaitSeconds(const Policy& policy) {
  return std::chrono::ceil<std::chrono::seconds>(policy.LongestRestore()).count() + 1;
}

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
    case Algorithm::kAnchoredWindowHalfOpen:
      return Counted::kInTheResetsWindow;
    default:
      return Counted::kNone;
  }
}

// The most admissions of one span counted for a Remaining: beyond it the count stops short,
// which only makes the bound looser.
constexpr size_t kMostCounted = 10'000;

}  // namespace

void ProbeFindings::Add(CheckId check, int64_t n, std::string example) {
  Entry& e = entries_[CheckName(check)];
  e.check = check;
  if (e.count > 0 && e.last == n) return;
  if (e.count++ == 0) e.first = std::move(example);
  e.last = n;
  if (e.exchanges.size() < kExamples) e.exchanges.push_back(n);
}

std::vector<ProbeFinding> ProbeFindings::Take(int64_t answers) {
  std::vector<ProbeFinding> out;
  for (auto& [name, e] : entries_) {
    out.push_back({e.check, absl::StrCat(e.count, " of ", answers, " answers: ", e.first),
                   std::move(e.exchanges)});
  }
  return out;
}

std::optional<int64_t> WholeNumber(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || text[0] == '-' || std::from_chars(text.data(), end, v).ptr != end) {
    return std::nullopt;
  }
  return v;
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
      value = WholeNumber(*text);
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

Result<Policy> PolicyFromHeaders(const Policy& model, bool window_given,
                                 const std::vector<HttpExchange>& exchanges) {
  // The limit `e` states in `header`, held to the window given.
  const auto with_given_window = [&](const HttpExchange& e, const std::string& header,
                                     int64_t limit) -> Result<Policy> {
    if (!window_given) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--from-headers: #", e.n, " states the limit (", header, ": ", limit,
          ") but not the window it counts over (RateLimit-Policy's w); give --window"));
    }
    return Policy::Window(model.algorithm, limit, model.window);
  };
  for (const HttpExchange& e : exchanges) {
    if (std::optional<std::string_view> text = FindHeader(e.headers, "RateLimit-Policy")) {
      Result<std::vector<RateLimitPolicyField>> p = ParseAnyRateLimitPolicy(*text);
      if (p.ok() && !p->empty() && p->front().quota > 0) {
        if (!p->front().window) {
          return with_given_window(e, "RateLimit-Policy", p->front().quota);
        }
        return Policy::Window(model.algorithm, p->front().quota,
                              std::chrono::seconds(*p->front().window));
      }
    }
    for (std::string_view name : {"X-RateLimit-Limit", "RateLimit-Limit"}) {
      if (std::optional<std::string_view> text = FindHeader(e.headers, name)) {
        if (std::optional<int64_t> limit = WholeNumber(*text); limit && *limit > 0) {
          return with_given_window(e, std::string(name), *limit);
        }
      }
    }
  }
  return absl::FailedPreconditionError(kNoPolicyInHeaders);
}

// What the answer's rate-limit headers say, checked against their grammar and the model: the
// Remaining it states, if any.
std::optional<int64_t> CheckStateHeaders(const ProbePlan& plan, const HttpExchange& e,
                                         Decision& decision, ProbeFindings& findings) {
  const std::string at = absl::StrCat("#", e.n, " ");
  const auto integer_header = [&](std::string_view name) -> std::optional<int64_t> {
    const std::optional<std::string_view> value = FindHeader(e.headers, name);
    if (!value) return std::nullopt;
    std::optional<int64_t> v = WholeNumber(*value);
    if (!v) {
      findings.Add(CheckId::kHeaderSyntax, e.n,
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
      findings.Add(CheckId::kResetInThePast, e.n,
                   absl::StrCat(at, std::string(name), ": ", *value, " is ", sent_s - *value,
                                " s before the request was sent"));
    } else if (from_now > longest) {
      findings.Add(CheckId::kResetBeyondModel, e.n,
                   absl::StrCat(at, std::string(name), ": ", *value, " is ", from_now,
                                " s ahead, but the model is whole again within ", longest, " s"));
    }
  };
  check_reset("X-RateLimit-Reset", integer_header("X-RateLimit-Reset"));
  check_reset("RateLimit-Reset", integer_header("RateLimit-Reset"));
  if (const std::optional<std::string_view> value = FindHeader(e.headers, "RateLimit-Policy")) {
    if (Result<std::vector<RateLimitPolicyField>> p = ParseAnyRateLimitPolicy(*value); !p.ok()) {
      findings.Add(CheckId::kHeaderSyntax, e.n,
                   absl::StrCat(at, "RateLimit-Policy: ", p.status().message()));
    }
  }
  if (const std::optional<std::string_view> value = FindHeader(e.headers, "RateLimit")) {
    Result<std::vector<RateLimitField>> r = ParseAnyRateLimit(*value);
    if (!r.ok()) {
      findings.Add(CheckId::kHeaderSyntax, e.n,
                   absl::StrCat(at, "RateLimit: ", r.status().message()));
    } else if (!r->empty()) {
      if (!remaining) remaining = r->front().remaining;
      check_reset("RateLimit's t", r->front().reset);
    }
  }
  if (remaining) decision.remaining = *remaining;
  return remaining;
}

// A denial's Retry-After: present (a note unless required), whole seconds or an HTTP-date, no
// longer than the model ever waits.
void CheckRetryAfter(const ProbePlan& plan, const HttpExchange& e, Decision& decision,
                     ProbeFindings& findings) {
  const std::string at = absl::StrCat("#", e.n, " ");
  const int64_t longest = LongestWaitSeconds(plan.policy);
  const std::optional<std::string_view> retry = FindHeader(e.headers, "Retry-After");
  if (!retry) {
    findings.Add(CheckId::kRetryAfterMissing, e.n,
                 absl::StrCat(at, "a ", e.status, " without Retry-After"));
    return;
  }
  Duration wait{};
  // A date and the server's now are each whole seconds: the wait between them is known to a
  // second either way.
  int64_t slack = 0;
  if (const std::optional<int64_t> seconds = WholeNumber(*retry)) {
    // At most a century: what a Duration holds, and far past any model's longest wait.
    constexpr int64_t kCentury = int64_t{100} * 365 * 24 * 3600;
    wait = std::chrono::seconds(std::min(*seconds, kCentury));
  } else if (const std::optional<Instant> date = ParseHttpDate(*retry)) {
    // Until the date on the server's clock (its Date), else on the probe's when answered.
    Instant now = e.answered;
    if (const std::optional<std::string_view> server_now = FindHeader(e.headers, "Date")) {
      now = ParseHttpDate(*server_now).value_or(now);
    }
    wait = std::max(Duration(0), *date - now);
    slack = 1;
  } else {
    findings.Add(CheckId::kHeaderSyntax, e.n,
                 absl::StrCat(at, "Retry-After: '", std::string(*retry),
                              "' is neither whole seconds nor an HTTP-date"));
    return;
  }
  decision.retry_after = std::chrono::round<std::chrono::seconds>(wait);
  const double wait_s = std::chrono::duration<double>(wait).count();
  if (wait_s > static_cast<double>(longest + slack)) {
    findings.Add(CheckId::kRetryAfterTooLong, e.n,
                 absl::StrCat(at, "Retry-After: ", std::string(*retry),
                              slack > 0 ? " (" + FormatDurationTo(wait, 0) + " away)" : "",
                              ", but the model never waits more than ", longest,
                              " s (milliseconds given for seconds?)"));
  }
}

// Whether the model's allowance comes back whole at the window's end and never before it (so a
// Remaining may rise only at the reset the server names).
bool RisesOnlyAtTheReset(Algorithm algorithm) {
  return algorithm == Algorithm::kFixedWindow || algorithm == Algorithm::kAnchoredWindow ||
         algorithm == Algorithm::kAnchoredWindowHalfOpen;
}

// One user's Remaining is never above what the model's limit leaves after the admissions that
// surely came first (answered before the answer was sent) and surely count at its decision
// (sent after its span began, wherever each fell), and its own. `admitted`: the user's
// admissions (exchange indices), in the order they were sent.
void CheckRemainingAgainstAdmissions(const Policy& policy,
                                     const std::vector<HttpExchange>& exchanges,
                                     const std::vector<size_t>& admitted,
                                     const std::vector<StatedRemaining>& stated,
                                     ProbeFindings& findings) {
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
        CheckId::kRemainingAboveModel, eb.n,
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
                              std::vector<StatedRemaining>& stated, ProbeFindings& findings) {
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
    findings.Add(CheckId::kRemainingRose, eb.n,
                 absl::StrCat("#", eb.n, " says ", b.remaining, " remain, more than the ",
                              a.remaining, " #", ea.n, " said, yet it was sent after #", ea.n,
                              " was answered and answered before the reset #", ea.n,
                              " named (counts lost, or a window not as stated)"));
  }
}

}  // namespace ratelab
