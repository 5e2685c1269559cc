#include "reports/stress_report.h"

#include <cstdio>
#include <optional>
#include <vector>

#include "reports/run_report.h"
#include "reports/view_parts.h"
#include "reports/witness_page.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessLinesShown = 16;

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The violations `check` found.
std::vector<const ViolationReport*> Found(const StressReport& r, CheckId check) {
  std::vector<const ViolationReport*> out;
  for (const ViolationReport& v : r.violations) {
    if (v.check == check) out.push_back(&v);
  }
  return out;
}

double Ms(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// "   1.204512s  #17 node 2 admitted, answered +0.204ms: HGETALL +0.101ms, HSET +0.180ms"
std::string DescribeRequest(const WitnessEvent& e) {
  std::string out = Printf("%10.6fs", e.invoke_s) + "  #" + std::to_string(e.id) + " node " +
                    std::to_string(e.node) + " " + e.outcome;
  if (e.complete_s)
    out += ", answered +" + Printf("%.3f", (*e.complete_s - e.invoke_s) * 1e3) + "ms";
  for (size_t i = 0; i < e.steps.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + e.steps[i].label.substr(0, e.steps[i].label.find(' ')) + " +" +
           Printf("%.3f", (e.steps[i].at_s - e.invoke_s) * 1e3) + "ms";
  }
  return out;
}

}  // namespace

StressReport MakeStressReport(const StressPlan& plan, const StressResult& result) {
  StressReport r;
  r.protocol = plan.protocol->name;
  r.store = plan.protocol->IsProcess() ? "process" : plan.store.ToString();
  r.policy = plan.policy.ToString();
  r.threads = plan.threads;
  r.users = plan.users;
  const double seconds = std::chrono::duration<double>(result.elapsed).count();
  r.duration_s = seconds;
  r.answered = static_cast<int64_t>(result.history.size());
  r.admitted = result.admitted;
  r.denied = result.denied;
  r.per_second = seconds > 0 ? static_cast<double>(r.answered) / seconds : 0;
  r.latency_ms.p50 = Ms(result.latency_p50);
  r.latency_ms.p99 = Ms(result.latency_p99);
  r.busiest_key = {result.busiest.key, result.busiest.admitted, result.busiest.allowed};
  r.promise = result.promise;
  r.false_denials_judged = FalseDenialsJudgedOverIntervals(plan.policy);
  if (result.failure) r.failure = DescribeFailure(*result.failure);
  for (const Violation& v : result.violations) {
    r.violations.push_back(MakeViolationReport(CheckId::kPromise, v, result.start));
  }
  for (const Violation& v : result.false_denials) {
    r.violations.push_back(MakeViolationReport(CheckId::kFalseDenials, v, result.start));
  }
  if (!result.failure) {
    const LinearizabilityJudgement& l = result.linearizability;
    StressLinearizability& linear = r.linearizability.emplace();
    linear.verdict = l.verdict;
    linear.calls = l.calls;
    linear.keys = l.keys;
    linear.states = l.states;
    linear.unknown_keys = l.unknown_keys;
    linear.lead = l.lead;
    linear.broken_keys = l.broken_keys;
    if (l.violation) {
      r.violations.push_back(
          MakeViolationReport(CheckId::kLinearizable, *l.violation, result.start));
    }
  }
  return r;
}

std::string RenderStressText(const StressReport& r) {
  if (!r.failure.empty()) {
    return r.protocol + ": FAILED: " + view_parts::kLimiterFailed +
           ", so nothing it decided can be trusted; not judged. " + r.failure + "\n";
  }
  std::string out = "answered   " + std::to_string(r.answered) + " (" +
                    Printf("%.0f", r.per_second) + "/s): " + std::to_string(r.admitted) +
                    " admitted, " + std::to_string(r.denied) + " denied\n";
  out += "latency    p50 " + Printf("%.3f", r.latency_ms.p50) + " ms, p99 " +
         Printf("%.3f", r.latency_ms.p99) + " ms, from sent to answered\n";
  if (const BusiestKeyReport& busiest = r.busiest_key; !busiest.key.empty()) {
    out += "busiest    " + busiest.key + ": " + std::to_string(busiest.admitted) +
           " admitted; the promise allows at most " + std::to_string(busiest.allowed) +
           " over the run (" +
           Printf("%.2f",
                  static_cast<double>(busiest.admitted) / static_cast<double>(busiest.allowed)) +
           "x)\n";
  }
  out += std::string(CheckName(r.promise)) + ": " +
         (Found(r, CheckId::kPromise).empty() ? "kept" : "BROKEN") + "\n";
  if (!Found(r, CheckId::kFalseDenials).empty()) {
    out += "false-denials: " + std::to_string(Found(r, CheckId::kFalseDenials).size()) +
           " key(s) with a denial no order explains\n";
  }
  if (const std::optional<StressLinearizability>& l = r.linearizability) {
    out += "linearizable: " + std::string(LinearVerdictName(l->verdict)) + " (" +
           std::to_string(l->calls) + " calls on " + std::to_string(l->keys) + " key(s); " +
           std::to_string(l->states) + " search states" +
           (l->unknown_keys > 0
                ? "; " + std::to_string(l->unknown_keys) + " key(s) past the search's budget"
                : std::string()) +

           ")\n";
    if (!l->lead.empty()) out += "  " + l->lead + "\n";
  }
  if (r.violations.empty() &&
      (!r.linearizability || r.linearizability->verdict != LinearVerdict::kNotLinearizable)) {
    // What was searched, as check says it.
    out +=
        "nothing found in " + std::to_string(r.answered) + " request(s) from " +
        std::to_string(r.threads) + " thread(s), " + std::to_string(r.users) + " user(s), " +
        Printf("%.1f", r.duration_s) + " s (" + r.policy +
        "; checks: " + std::string(CheckName(r.promise)) +
        (r.false_denials_judged ? " false-denials" : "") + " linearizable" +
        (r.linearizability && r.linearizability->verdict == LinearVerdict::kUnknown ? " (undecided)"
                                                                                    : "") +
        ")\n";
  }
  for (const ViolationReport& v : r.violations) {
    out += "  [" + std::string(CheckName(v.invariant)) + "] " + v.key + ": " + v.summary + "\n";
    for (size_t i = 0; i < v.witness.size() && i < kWitnessLinesShown; ++i) {
      out += "    " + DescribeRequest(v.witness[i]) + "\n";
    }
    if (v.witness.size() > kWitnessLinesShown) {
      out += "    ... and " + std::to_string(v.witness.size() - kWitnessLinesShown) + " more\n";
    }
  }
  out +=
      "judged on [sent, answered] of each request, in seconds since the start: only what "
      "breaks the promise wherever each decision fell; and whether some order of the requests, "
      "each taking effect inside its interval (and deciding at the instant it was sent at, where "
      "the limiter decides on the time its client sends), gives every answer (allowed or denied) "
      "the policy's model gives, which catches false denials too. Remaining and Retry-After are "
      "not judged here.\n";
  return out;
}

std::string RenderStressJunit(const StressReport& r) {
  // A case for the promise, and one for linearizability (when the run was judged).
  std::vector<view_parts::JunitCase> cases;
  const auto add = [&](const std::string& name, const std::vector<const ViolationReport*>& found) {
    view_parts::JunitCase c{"stress." + r.protocol, name, r.duration_s, "", "", false};
    if (!r.failure.empty()) {
      c.message = "the limiter failed: " + r.failure;
      c.error = true;
    } else if (!found.empty()) {
      c.message = std::to_string(found.size()) + " violation(s): " + found.front()->summary;
      c.failure = view_parts::WitnessText(*found.front(), {}) +
                  "real concurrency, so no seed replays it: run it again to look for the race\n";
    }
    cases.push_back(std::move(c));
  };
  add(std::string(CheckName(r.promise)), Found(r, CheckId::kPromise));
  if (r.failure.empty() && r.false_denials_judged) {
    add(std::string(CheckName(CheckId::kFalseDenials)), Found(r, CheckId::kFalseDenials));
  }
  if (r.linearizability) {
    add(std::string(CheckName(CheckId::kLinearizable)), Found(r, CheckId::kLinearizable));
    // Not linearizable with no witness of its own: keys already broken, said in the lead.
    view_parts::JunitCase& linear = cases.back();
    if (r.failure.empty() && linear.message.empty() &&
        r.linearizability->verdict == LinearVerdict::kNotLinearizable) {
      linear.message = r.linearizability->lead;
      linear.failure = r.linearizability->lead + "\n";
    } else if (r.failure.empty() && linear.message.empty() &&
               r.linearizability->verdict == LinearVerdict::kUnknown) {
      linear.skipped = "undecided: " + r.linearizability->lead;
    }
  }
  return view_parts::JunitDocument("ratelab.stress." + r.protocol, cases, r.duration_s);
}

std::string RenderStressHtml(const StressReport& r) {
  WitnessPage page;
  page.title = "ratelab stress: " + r.protocol;
  page.text = RenderStressText(r);
  const CheckVerdict verdict = VerdictOf(r);
  page.bad = verdict != CheckVerdict::kNone;
  if (verdict == CheckVerdict::kFailure) {
    page.verdict = std::string("FAILED: ") + view_parts::kLimiterFailed +
                   ", so nothing it decided can be trusted; not judged";
    page.sentences = {r.failure};
  } else {
    std::vector<std::string> broken;
    if (!Found(r, CheckId::kPromise).empty()) broken.push_back(std::string(CheckName(r.promise)));
    if (!Found(r, CheckId::kFalseDenials).empty())
      broken.emplace_back(CheckName(CheckId::kFalseDenials));
    if (r.linearizability && r.linearizability->verdict == LinearVerdict::kNotLinearizable) {
      broken.emplace_back(CheckName(CheckId::kLinearizable));
    }
    page.verdict = broken.empty()
                       ? "Nothing found in " + std::to_string(r.answered) + " request(s) from " +
                             std::to_string(r.threads) + " thread(s)"
                       : "BROKEN: " + view_parts::Listed(broken);
    page.sentences = {
        std::to_string(r.answered) + " answered (" + Printf("%.0f", r.per_second) +
            " a second): " + std::to_string(r.admitted) + " admitted, " + std::to_string(r.denied) +
            " denied; latency from sent to answered p50 " + Printf("%.3f", r.latency_ms.p50) +
            " ms, p99 " + Printf("%.3f", r.latency_ms.p99) + " ms.",
        "Real concurrency: each decision took effect at an unknown instant between its request's "
        "send and its answer, so each is drawn as that interval, and no seed replays it: run it "
        "again to look for the race."};
    if (r.linearizability && !r.linearizability->lead.empty()) {
      page.sentences.push_back(r.linearizability->lead);
    }
  }
  size_t shown = 0;
  for (const ViolationReport& v : r.violations) {
    if (++shown > view_parts::kShownViolations) break;
    page.shown.push_back({std::string(CheckName(v.invariant)) + " on key " + v.key,
                          {},
                          &v,
                          {},
                          "node",
                          std::nullopt,
                          ""});
  }
  page.searched = {
      {"what", "searched"},
      {"limiter", r.protocol},
      {"store", r.store},
      {"policy", r.policy},
      {"load", std::to_string(r.threads) + " thread(s), " + std::to_string(r.users) + " user(s), " +
                   Printf("%.1f", r.duration_s) + " s"},
      {"checks", std::string(CheckName(r.promise)) +
                     (r.false_denials_judged ? ", false-denials" : "") + ", linearizable"}};
  return RenderWitnessPage(page);
}

Result<std::string> WriteStressReport(const StressReport& r, const OutputDir& dir) {
  const std::string title = "ratelab stress: " + r.protocol;
  return view_parts::WriteViews(
      {RenderStressHtml(r), view_parts::TextMarkdown(title, RenderStressText(r)),
       JsonText(ToJson(r)), RenderStressJunit(r)},
      dir);
}

}  // namespace ratelab
