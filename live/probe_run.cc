#include "live/probe_run.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ratelab {

namespace {

std::vector<std::string> KeptHeaders() {
  return {std::begin(kProbeHeaders), std::end(kProbeHeaders)};
}

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
  if (!sent.ok()) {  // refused, or not resolved: not sent, and said so
    e.sent = e.answered = clock.Now();
    e.error = std::string(sent.status().message());
  }
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
      const ProbeAnswer kind = AnswerOf(plan_, e);
      if (kind == ProbeAnswer::kDenied) denial = &e;
      if (kind != ProbeAnswer::kDenied && kind != ProbeAnswer::kAdmitted) {
        note = absl::StrCat("#", e.n, " was neither an admission nor a denial");
        return;
      }
    }
    if (denial == nullptr) {
      note = absl::StrCat(user, " was not denied in ", RetryAfterTries(policy_), " requests");
      return;
    }
    const std::optional<std::string_view> header = FindHeader(denial->headers, "Retry-After");
    const std::optional<int64_t> wait = header ? WholeNumber(*header) : std::nullopt;
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
    const ProbeAnswer kind = AnswerOf(plan_, retry);
    if (early && kind == ProbeAnswer::kAdmitted) {
      findings.push_back(
          {CheckId::kRetryAfterDishonest,
           absl::StrCat("#", retry.n, " was admitted ", FormatDuration(at), " after #", denial_n,
                        " said Retry-After: ", *wait, " (a wait it did not need)"),
           {denial_n, retry.n}});
    } else if (!early && kind == ProbeAnswer::kDenied) {
      findings.push_back({CheckId::kRetryAfterDishonest,
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
      Result<Policy> learnt = PolicyFromHeaders(plan.policy, plan.window_given, exchanges);
      if (!learnt.ok()) return learnt.status();
      policy = *learnt;
    }
    if (plan.traffic != TrafficKind::kBoundaryAttack) break;
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
  // (An answer probe could not read is the server's, and a finding.)
  const auto answered = std::find_if(exchanges.begin(), exchanges.end(), [](const HttpExchange& e) {
    return e.answered_ok() || e.unreadable;
  });
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
  r.load_elapsed = elapsed;
  r.interrupted = interrupted;
  const bool unreadable =
      std::any_of(r.findings.begin(), r.findings.end(),
                  [](const ProbeFinding& f) { return f.check == CheckId::kUnreadableAnswers; });
  if (r.admitted + r.denied == 0 && !unreadable) {
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
  }
  r.elapsed = clock.Now() - start;
  return judged;
}

}  // namespace ratelab
