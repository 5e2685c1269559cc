// What the probe's tests against real servers share: the plan they start from, and a run.
#ifndef RATELAB_LIVE_PROBE_TEST_UTIL_H_
#define RATELAB_LIVE_PROBE_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "impl/core/system_clock.h"
#include "live/probe_run.h"

namespace ratelab::testing_probe {

// The limit of the test servers' fixed window: 2 a minute per user.
inline constexpr int64_t kLimit = 2;

inline ProbePlan PlanFor(const std::string& url) {
  ProbePlan plan;
  plan.url = url;
  plan.policy = Policy::Window(Algorithm::kFixedWindow, kLimit, std::chrono::minutes(1));
  plan.users = 2;
  plan.concurrency = 2;
  plan.max_requests = 12;
  plan.max_per_second = 400;
  plan.duration = std::chrono::seconds(10);
  return plan;
}

// `plan` run on the wall clock; an error fails the test.
// The checks of a result's findings, by name, in the order found.
inline std::vector<std::string> FindingChecks(const ProbeResult& r) {
  std::vector<std::string> out;
  for (const ProbeFinding& f : r.findings) out.emplace_back(CheckName(f.check));
  return out;
}

// Whether a loaded machine stretched a run's answers (p99 over 4 ms; a quiet run's is under 2),
// which makes their intervals overlap so much more that a search may run out of its budget.
inline bool Stretched(const ProbeResult& r) { return r.latency_p99 > std::chrono::milliseconds(4); }

// Every run's linearizability is decided ("unknown" on no key), unless it was Stretched.
inline ProbeResult Probe(const ProbePlan& plan) {
  const SystemClock clock;
  Result<ProbeResult> r = RunProbe(plan, clock);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return ProbeResult{};
  if (!Stretched(*r)) {
    EXPECT_NE(r->linearizability.verdict, LinearVerdict::kUnknown)
        << r->linearizability.lead << " (p99 " << FormatDuration(r->latency_p99) << ")";
  }
  return *std::move(r);
}

}  // namespace ratelab::testing_probe

#endif  // RATELAB_LIVE_PROBE_TEST_UTIL_H_
