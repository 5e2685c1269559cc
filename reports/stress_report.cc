#include "reports/stress_report.h"

#include <cstdio>

#include "reports/run_report.h"
#include "reports/view_parts.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessLinesShown = 16;

std::string Printf(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
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
  r.protocol = plan.subject.name;
  r.store = plan.store.ToString();
  r.policy = plan.policy.ToString();
  r.threads = plan.threads;
  r.users = plan.users;
  const double seconds = std::chrono::duration<double>(result.elapsed).count();
  r.duration_s = seconds;
  r.answered = static_cast<int64_t>(result.history.size());
  r.admitted = result.admitted;
  r.denied = result.denied;
  r.per_second = seconds > 0 ? static_cast<double>(r.answered) / seconds : 0;
  r.latency_p50_ms = Ms(result.latency_p50);
  r.latency_p99_ms = Ms(result.latency_p99);
  r.busiest_key = result.busiest.key;
  r.busiest_admitted = result.busiest.admitted;
  r.busiest_allowed = result.busiest.allowed;
  r.promise = result.promise;
  if (result.failure) r.failure = DescribeFailure(*result.failure);
  for (const Violation& v : result.violations) {
    r.violations.push_back(MakeViolationReport("promise", v, result.start));
  }
  return r;
}

std::string RenderStressText(const StressReport& r) {
  if (!r.failure.empty()) {
    return r.protocol +
           ": FAILED: the limiter answered a request with an error instead of a "
           "decision, so nothing it decided can be trusted; not judged. " +
           r.failure + "\n";
  }
  std::string out = "answered   " + std::to_string(r.answered) + " (" +
                    Printf("%.0f", r.per_second) + "/s): " + std::to_string(r.admitted) +
                    " admitted, " + std::to_string(r.denied) + " denied\n";
  out += "latency    p50 " + Printf("%.3f", r.latency_p50_ms) + " ms, p99 " +
         Printf("%.3f", r.latency_p99_ms) + " ms, from sent to answered\n";
  if (!r.busiest_key.empty()) {
    out += "busiest    " + r.busiest_key + ": " + std::to_string(r.busiest_admitted) +
           " admitted; the promise allows at most " + std::to_string(r.busiest_allowed) +
           " over the run (" +
           Printf("%.2f", static_cast<double>(r.busiest_admitted) /
                              static_cast<double>(r.busiest_allowed)) +
           "x)\n";
  }
  out += r.promise + ": " + (r.violations.empty() ? "kept" : "BROKEN") + "\n";
  for (const ViolationReport& v : r.violations) {
    out += "  [" + v.invariant + "] " + v.key + ": " + v.summary + "\n";
    for (size_t i = 0; i < v.witness.size() && i < kWitnessLinesShown; ++i) {
      out += "    " + DescribeRequest(v.witness[i]) + "\n";
    }
    if (v.witness.size() > kWitnessLinesShown) {
      out += "    ... and " + std::to_string(v.witness.size() - kWitnessLinesShown) + " more\n";
    }
  }
  out +=
      "judged on [sent, answered] of each request, in seconds since the start: only what "
      "breaks the promise wherever each decision fell. False denials and Retry-After are not "
      "judged here (they need the store's order of steps: see ratelab check).\n";
  return out;
}

std::string RenderStressJunit(const StressReport& r) {
  view_parts::JunitCase c{"stress." + r.protocol, r.promise, r.duration_s, "", "", false};
  if (!r.failure.empty()) {
    c.message = "the limiter failed: " + r.failure;
    c.error = true;
  } else if (!r.violations.empty()) {
    const ViolationReport& v = r.violations.front();
    c.message = std::to_string(r.violations.size()) + " violation(s): " + v.summary;
    c.failure = view_parts::WitnessText(v, {}) +
                "real concurrency, so no seed replays it: run it again to look for the race\n";
  }
  return view_parts::JunitDocument("ratelab.stress." + r.protocol, {c}, r.duration_s);
}

}  // namespace ratelab
