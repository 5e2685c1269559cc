// Store faults in the simulator: outages under each failure policy, restarts under each
// durability, latency spikes, and swarm mode.
#include <gtest/gtest.h>

#include "sim/scenario_run.h"
#include "sim/swarm.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

RunResult RunYaml(const std::string& yaml, uint64_t seed = 1) {
  Result<Scenario> s = ParseScenario(yaml, "test.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  Result<RunResult> c = RunScenario(*s, seed);
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

int64_t Violations(const LimiterOutcome& o) { return o.violation_count(); }

// One request a second for two minutes; the store is unreachable from 62s to 82s, in the
// second window, where the first two requests leave room for three more.
std::string OutageScenario(const std::string& failure_policy, const std::string& extra = "") {
  return "latency: {to_store: {base: 1ms}, from_store: {base: 1ms}}\n"
         "limiters:\n"
         "  - {protocol: kv-fixed-window-lua, algorithm: fixed-window, limit: 5, window: 1m,\n"
         "     on_store_error: " +
         failure_policy + extra +
         "}\n"
         "traffic:\n  - {type: constant, user: u, interval: 1s, count: 120}\n"
         "faults:\n  - {type: store-outage, at: 62s, for: 20s}\n"
         "checks: [promise, false-denials]\n";
}

// How long after the scenarios' start `e` was invoked.
Duration Since(const HistoryEvent& e) { return e.invoke - Scenario{}.start; }

bool InOutage(const HistoryEvent& e) { return Since(e) >= seconds(62) && Since(e) < seconds(82); }

TEST(StoreOutage, FailOpenAdmitsEveryRequestItCouldNotDecideAndOverAdmits) {
  const RunResult c = RunYaml(OutageScenario("fail-open"));
  const LimiterOutcome& o = c.limiters.front();
  int64_t during = 0;
  for (const HistoryEvent& e : o.history) {
    if (!InOutage(e)) continue;
    ++during;
    ASSERT_TRUE(e.decision.has_value());
    EXPECT_TRUE(e.decision->allowed) << "fail-open denied at " << FormatInstant(e.invoke);
  }
  EXPECT_EQ(during, 20);
  EXPECT_GT(Violations(o), 0) << "20 admissions in a window of limit 5 must break the promise";
}

TEST(StoreOutage, FailClosedDeniesEveryRequestItCouldNotDecide) {
  const RunResult c = RunYaml(OutageScenario("fail-closed"));
  const LimiterOutcome& o = c.limiters.front();
  for (const HistoryEvent& e : o.history) {
    if (!InOutage(e)) continue;
    ASSERT_TRUE(e.decision.has_value());
    EXPECT_FALSE(e.decision->allowed);
    EXPECT_EQ(e.decision->retry_after, seconds(1));
  }
  EXPECT_EQ(o.checks[0].violations.size(), 0u) << "never over-admits";
  EXPECT_GT(o.checks[1].violations.size(), 0u) << "but denies what the window had room for";
}

// A store that stalls answers nothing in time, and still runs what it was sent once it resumes:
// the two requests answered as failed count, so the second window admits three of its requests
// where an outage of the same span (which loses what was sent) lets it admit five. No check
// calls the denials false: a request without an answer may have counted. (docs/design.md.)
TEST(StoreStall, RequestsAnsweredAsFailedStillCountOnceTheStoreResumes) {
  const auto run = [](const std::string& fault) {
    return RunYaml(
        "latency: {to_store: {base: 1ms}, from_store: {base: 1ms}}\n"
        "limiters:\n"
        "  - {protocol: kv-fixed-window-lua, algorithm: fixed-window, limit: 5, window: 1m}\n"
        "traffic:\n  - {type: constant, user: u, interval: 1s, count: 90}\n"
        "faults:\n  - {type: " +
        fault +
        ", at: 60500ms, for: 2s}\n"
        "checks: [promise, false-denials]\n");
  };
  const auto admitted_in_second_window = [](const LimiterOutcome& o) {
    int64_t n = 0, unanswered = 0;
    for (const HistoryEvent& e : o.history) {
      if (Since(e) < seconds(60) || Since(e) >= seconds(120)) continue;
      n += e.decision && e.decision->allowed;
      unanswered += !e.decision.has_value();
    }
    EXPECT_EQ(unanswered, 2);  // at 61s and 62s
    return n;
  };
  const RunResult stall = run("store-stall");
  EXPECT_EQ(admitted_in_second_window(stall.limiters.front()), 3);
  EXPECT_EQ(stall.limiters.front().violation_count(), 0) << "no false alarm";
  EXPECT_EQ(admitted_in_second_window(run("store-outage").limiters.front()), 5);
}

TEST(StoreOutage, ErrorPolicyLeavesTheRequestsUnanswered) {
  const RunResult c = RunYaml(OutageScenario("error"));
  EXPECT_EQ(c.limiters.front().unanswered, 20);
}

TEST(StoreOutage, CircuitBreakerOpensAfterThresholdAndProbesAfterEachCoolDown) {
  const RunResult c =
      RunYaml(OutageScenario("circuit-breaker", ", breaker: {threshold: 3, cool_down: 5s}"));
  const LimiterOutcome& o = c.limiters.front();
  // Failures at 62, 63, 64 open the breaker until 69; probes at 69, 74, 79 fail; the probe at
  // 84 finds the store back and closes it.
  for (const HistoryEvent& e : o.history) {
    const int64_t s = std::chrono::duration_cast<seconds>(Since(e)).count();
    ASSERT_TRUE(e.decision.has_value()) << s;
    const bool probe_or_closed = s < 65 || s == 69 || s == 74 || s == 79 || s >= 84;
    EXPECT_EQ(e.steps.empty(), !probe_or_closed) << "request at " << s << "s";
    if (s >= 62 && s < 84) {
      EXPECT_TRUE(e.decision->allowed) << s;
    }
  }
  EXPECT_GT(Violations(o), 0);
}

std::string RestartScenario(const std::string& durability, const std::string& first_burst_at,
                            const std::string& restart_at) {
  return "store: {durability: " + durability +
         "}\n"
         "limiters:\n"
         "  - {protocol: kv-fixed-window-lua, algorithm: fixed-window, limit: 5, window: 1m}\n"
         "  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 5, interval: 12s}\n"
         "traffic:\n"
         "  - {type: burst, user: u, at: " +
         first_burst_at +
         ", count: 5}\n"
         "  - {type: burst, user: u, at: 40s, count: 5}\n"
         "faults:\n  - {type: store-restart, at: " +
         restart_at + "}\n";
}

TEST(StoreRestart, DurabilityAlwaysKeepsEveryCount) {
  const RunResult c = RunYaml(RestartScenario("always", "30200ms", "30500ms"));
  for (const LimiterOutcome& o : c.limiters) {
    EXPECT_EQ(o.admitted, 5) << o.protocol;
    EXPECT_EQ(Violations(o), 0) << o.protocol;
  }
}

TEST(StoreRestart, DurabilityNoneLosesEveryCountAndTheHarnessSeesTheOverAdmission) {
  const RunResult c = RunYaml(RestartScenario("none", "10s", "30s"));
  for (const LimiterOutcome& o : c.limiters) {
    EXPECT_EQ(o.admitted, 10) << o.protocol;
    EXPECT_GT(Violations(o), 0) << o.protocol;
  }
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes.front().find("every count was lost"), std::string::npos) << c.notes.front();
}

TEST(StoreRestart, DurabilityEverySecLosesOnlyTheLastSecond) {
  const RunResult kept = RunYaml(RestartScenario("everysec", "29s", "30500ms"));
  const RunResult lost = RunYaml(RestartScenario("everysec", "30200ms", "30500ms"));
  for (const LimiterOutcome& o : kept.limiters) EXPECT_EQ(o.admitted, 5) << o.protocol;
  for (const LimiterOutcome& o : lost.limiters) EXPECT_EQ(o.admitted, 10) << o.protocol;
}

TEST(StoreRestart, ScriptsAreReloadedAfterARestart) {
  const RunResult c = RunYaml(RestartScenario("always", "10s", "30s"));
  const History& h = c.limiters.front().history;
  // The first request after the restart gets NOSCRIPT from EVALSHA and falls back to EVAL.
  // (The burst's five requests all send EVALSHA before the first EVAL lands, so each of them
  // falls back.)
  EXPECT_EQ(h[0].steps.size(), 2u) << "a new store has no scripts either";
  const HistoryEvent& after = h[5];
  ASSERT_EQ(after.steps.size(), 2u);
  EXPECT_EQ(after.steps[0].label.rfind("EVALSHA", 0), 0u) << after.steps[0].label;
  EXPECT_EQ(after.steps[1].label.rfind("EVAL ", 0), 0u) << after.steps[1].label;
}

TEST(NodeCrash, KvProtocolsKeepTheirCountsInTheStore) {
  const RunResult c = RunYaml(
      "limiters:\n"
      "  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 5, interval: 12s}\n"
      "  - {protocol: memory-gcra, algorithm: gcra, burst: 5, interval: 12s}\n"
      "traffic:\n"
      "  - {type: burst, user: u, at: 10s, count: 5}\n"
      "  - {type: burst, user: u, at: 40s, count: 5}\n"
      "faults:\n  - {type: crash, node: 0, at: 30s}\n");
  EXPECT_EQ(c.limiters[0].admitted, 5 + 2);  // 30 s refilled 2 tokens at one per 12 s
  EXPECT_EQ(c.limiters[1].admitted, 5 + 5);  // the restart forgot the bucket
}

TEST(LatencySpike, StepsDuringTheSpikeTakeLonger) {
  const RunResult c = RunYaml(
      "latency: {to_store: {base: 1ms}, from_store: {base: 1ms}}\n"
      "limiters:\n"
      "  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 100, interval: 1ms}\n"
      "traffic:\n  - {type: constant, user: u, interval: 1s, count: 10}\n"
      "faults:\n  - {type: latency-spike, at: 3s, for: 3s, extra: 250ms}\n");
  for (const HistoryEvent& e : c.limiters.front().history) {
    const Duration took = e.complete - e.invoke;
    const Duration since = Since(e);
    const bool spiked = since >= seconds(3) && since < seconds(6);
    const int64_t steps = static_cast<int64_t>(e.steps.size());
    EXPECT_EQ(took, steps * (spiked ? milliseconds(502) : milliseconds(2)))
        << FormatInstant(e.invoke);
  }
}

TEST(LatencySpike, OverlappingSpikesAddUp) {
  const RunResult c = RunYaml(
      "latency: {to_store: {base: 1ms}, from_store: {base: 1ms}}\n"
      "limiters:\n"
      "  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 100, interval: 1ms}\n"
      "traffic:\n  - {type: constant, user: u, interval: 1s, count: 10}\n"
      "faults:\n  - {type: latency-spike, at: 2s, for: 4s, extra: 100ms}\n"
      "  - {type: latency-spike, at: 3s, for: 1s, extra: 200ms}\n");
  for (const HistoryEvent& e : c.limiters.front().history) {
    const Duration since = Since(e);
    const Duration leg =
        milliseconds(1) +
        (since >= seconds(2) && since < seconds(6) ? milliseconds(100) : Duration(0)) +
        (since >= seconds(3) && since < seconds(4) ? milliseconds(200) : Duration(0));
    EXPECT_EQ(e.complete - e.invoke, static_cast<int64_t>(e.steps.size()) * 2 * leg)
        << FormatInstant(e.invoke);
  }
}

TEST(Swarm, EachSeedDrawsItsOwnFaultsAndTheSameSeedTheSameOnes) {
  const std::string yaml =
      "nodes: 3\nswarm: true\n"
      "limiters:\n  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 5, interval: 1s}\n"
      "traffic:\n  - {type: zipf-users, users: 20, duration: 2m, mean_gap: 100ms}\n";
  const RunResult a = RunYaml(yaml, 5), b = RunYaml(yaml, 5), other = RunYaml(yaml, 6);
  ASSERT_FALSE(a.faults.empty());
  EXPECT_LE(a.faults.size(), 3u);
  EXPECT_EQ(a.faults, b.faults);
  EXPECT_EQ(a.history_hash(), b.history_hash());
  EXPECT_NE(a.faults, other.faults);
  bool store_fault = false;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    for (const FaultWindow& f : RunYaml(yaml, seed).faults) {
      store_fault = store_fault || f.what.find("store") != std::string::npos;
    }
  }
  EXPECT_TRUE(store_fault) << "20 seeds never drew a store fault";
}

}  // namespace
}  // namespace ratelab
