#include "live/probe_judge.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace ratelab {

Result<ProbeResult> JudgeProbe(const ProbePlan& given, std::vector<HttpExchange> exchanges) {
  ProbePlan plan = given;
  if (plan.policy_from_headers) {
    Result<Policy> learnt = PolicyFromHeaders(plan.policy, plan.window_given, exchanges);
    if (!learnt.ok()) return learnt.status();
    plan.policy = *learnt;
  }
  ProbeResult r;
  r.policy = plan.policy;
  r.exchanges = std::move(exchanges);
  ProbeFindings findings;
  std::vector<Duration> latencies;
  int64_t answers = 0;
  std::map<std::string, std::vector<StatedRemaining>> stated;  // by user
  std::map<std::string, std::vector<size_t>> admitted;         // by user
  for (size_t i = 0; i < r.exchanges.size(); ++i) {
    const HttpExchange& e = r.exchanges[i];
    const ProbeAnswer kind = AnswerOf(plan, e);
    HistoryEvent& event = r.history.emplace_back();
    event.id = static_cast<int64_t>(i);
    event.key = e.label;
    event.invoke = e.sent;
    event.complete = e.answered;
    switch (kind) {
      case ProbeAnswer::kAdmitted:
        ++r.admitted;
        break;
      case ProbeAnswer::kDenied:
        ++r.denied;
        break;
      case ProbeAnswer::kServerError:
        ++r.server_errors;
        findings.Add(CheckId::kServerErrors, e.n,
                     absl::StrCat("#", e.n, " ", e.status, " (a limiter that fails under load?)"));
        break;
      case ProbeAnswer::kUnanswered:
        ++r.unanswered;
        break;
      case ProbeAnswer::kUnreadable:
        // Answered, but unread: whether it counted is not known, as for no answer.
        ++r.unanswered;
        ++answers;
        findings.Add(CheckId::kUnreadableAnswers, e.n, absl::StrCat("#", e.n, ": ", e.error));
        break;
      case ProbeAnswer::kOther:
        ++r.other;
        break;
    }
    if (kind == ProbeAnswer::kUnanswered || kind == ProbeAnswer::kUnreadable) continue;
    ++answers;
    latencies.push_back(e.answered - e.sent);
    Decision d;
    d.allowed = kind == ProbeAnswer::kAdmitted;
    d.limit = plan.policy.limit;
    const std::optional<int64_t> remaining = CheckStateHeaders(plan, e, d, findings);
    if (kind == ProbeAnswer::kDenied) CheckRetryAfter(plan, e, d, findings);
    // Only an admission or a denial is a decision; anything else may or may not have counted.
    if (kind == ProbeAnswer::kAdmitted || kind == ProbeAnswer::kDenied) {
      event.decision = d;
      if (remaining) stated[e.label].push_back({i, *remaining, kind == ProbeAnswer::kAdmitted});
      if (kind == ProbeAnswer::kAdmitted) admitted[e.label].push_back(i);
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
  r.latency_p50 = Percentile(latencies, 50);
  r.latency_p99 = Percentile(latencies, 99);
  r.promise = PromiseInvariant(plan.policy.algorithm);
  // The server decides each request on its own clock as it handles it: the instants it saw
  // follow the order its decisions took effect in. Its clock's resolution is not known: to the
  // nanosecond, or as coarse as kProbeResolution, when it may see an instant up to that much
  // before the request was sent (floor(t) of a clock whose ticks are not the probe's). Both are
  // allowed, by the promise and by linearizability alike: one model of the server's clock, so
  // that a run never calls the same admissions broken and linearizable.
  History early = r.history;
  for (HistoryEvent& e : early) e.invoke -= kProbeResolution - Duration(1);
  r.violations =
      JudgePromiseOverIntervals(r.history, early, plan.policy, Duration(1), plan.fresh_users);
  for (Violation& v : r.violations) {
    v.summary += " (its clock to the nanosecond or to the " + FormatDuration(kProbeResolution) +
                 ", unknown)";
  }
  r.linearizability = JudgeLinearizability(early, plan.policy, Duration(1), Duration(1),
                                           DecisionClock::kStore, r.violations);
  if (r.linearizability.violation) {
    Violation& v = *r.linearizability.violation;
    for (HistoryEvent& e : v.witness) e = r.history[static_cast<size_t>(e.id)];
    v.summary += " (its clock to the nanosecond or to the " + FormatDuration(kProbeResolution) +
                 ", unknown)";
  }
  // A denial no order explains on its own, whatever the search of linearizability decided (it
  // may run out of budget): the model had room wherever the decision fell, with every admission
  // that may have come first as late as its interval lets it, on either clock (the tie of its
  // coarser one forgiven). The first of each user.
  const std::vector<Violation> false_denials = JudgeFalseDenialsOverIntervals(
      r.history, early, plan.policy, kProbeResolution, kProbeResolution, DecisionClock::kStore);
  if (!false_denials.empty()) {
    const Violation& first = false_denials.front();
    ProbeFinding f{CheckId::kFalseDenials, "", {}};
    for (const Violation& v : false_denials) {
      if (f.exchanges.size() < 3) {
        f.exchanges.push_back(r.exchanges[static_cast<size_t>(v.witness.front().id)].n);
      }
    }
    // Its clock's resolution is unknown, not the 1ms judged at.
    f.summary = absl::StrCat(false_denials.size(), " user(s) with a denial no order explains: #",
                             f.exchanges.front(), " (", first.key, ") ", first.summary,
                             " (its clock to the nanosecond or to the ",
                             FormatDuration(kProbeResolution), ", unknown)");
    r.findings.push_back(std::move(f));  // first in name order, as the rest follow
  }
  for (ProbeFinding& f : findings.Take(answers)) {
    (Required(plan, f.check) ? r.findings : r.notes).push_back(std::move(f));
  }
  return r;
}

}  // namespace ratelab
