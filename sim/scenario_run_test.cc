#include "sim/scenario_run.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sim/sweep.h"

namespace ratelab {
namespace {

const LimiterOutcome& Find(const RunResult& c, const std::string& protocol) {
  for (const LimiterOutcome& o : c.limiters) {
    if (o.protocol == protocol) return o;
  }
  ADD_FAILURE() << "no " << protocol;
  return c.limiters.front();
}

const std::vector<Violation>& Violations(const LimiterOutcome& o, const std::string& check) {
  for (const CheckResult& c : o.checks) {
    if (c.name() == check) return c.violations;
  }
  ADD_FAILURE() << "no check " << check;
  return o.checks.front().violations;
}

TEST(DemoScenario, FixedWindowKeepsItsPromiseButReachesTwiceTheLimitInSomeWindow) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok()) << c.status();
  const LimiterOutcome& fw = Find(*c, "memory-fixed-window");
  EXPECT_TRUE(Violations(fw, "promise").empty());
  EXPECT_EQ(fw.max_in_any_window, 2 * c->limit);
  ASSERT_FALSE(Violations(fw, "any-window-cap").empty());
  EXPECT_EQ(Violations(fw, "any-window-cap").front().witness.size(), 6u) << "N + 1 events";
}

TEST(DemoScenario, SlidingLogNeverExceedsTheLimitInAnyWindow) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok());
  const LimiterOutcome& sl = Find(*c, "memory-sliding-log");
  EXPECT_EQ(sl.max_in_any_window, c->limit);
  EXPECT_TRUE(Violations(sl, "any-window-cap").empty());
}

TEST(DemoScenario, EveryLimiterKeepsItsOwnPromiseAndSeesTheSameTraffic) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->limiters.size(), 5u);
  for (const LimiterOutcome& o : c->limiters) {
    EXPECT_TRUE(Violations(o, "promise").empty()) << o.protocol;
    EXPECT_EQ(o.offered, c->limiters.front().offered);
    EXPECT_EQ(o.admitted + o.denied, o.offered) << "no faults: every request answered";
    EXPECT_GT(o.denied, 0) << o.protocol << " never denied: the demo shows nothing";
  }
}

TEST(DemoScenario, SameSeedSameHistoryAndTheSeedMatters) {
  Result<RunResult> a = RunScenario(DemoScenario(), 7);
  Result<RunResult> b = RunScenario(DemoScenario(), 7);
  Result<RunResult> other = RunScenario(DemoScenario(), 8);
  ASSERT_TRUE(a.ok() && b.ok() && other.ok());
  EXPECT_EQ(a->history_hash(), b->history_hash());
  EXPECT_NE(a->history_hash(), other->history_hash());
}

TEST(Sweep, StopsWhenItsProgressSaysSoAndKeepsTheSeedsItRan) {
  const Result<SweepResult> all = RunSweep(DemoScenario(), SeedSpan{1, 6}, 1);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_FALSE(all->interrupted);
  EXPECT_EQ(all->seeds.size(), 6u);
  const Result<SweepResult> part =
      RunSweep(DemoScenario(), SeedSpan{1, 6}, 1, [](uint64_t done, uint64_t) { return done < 2; });
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_TRUE(part->interrupted);
  ASSERT_EQ(part->seeds.size(), 2u);
  EXPECT_EQ(part->seeds[1].seed, 2u);
  EXPECT_EQ(part->seeds[1].history_hash, all->seeds[1].history_hash) << "the same runs";
}

// Each run is its own: on three threads, with progress told from them, a sweep is the same as on
// one (and ThreadSanitizer watches the threads share nothing unguarded: scripts/sanitize tsan).
TEST(Sweep, OnSeveralThreadsGivesWhatOneThreadGives) {
  const Result<SweepResult> one = RunSweep(DemoScenario(), SeedSpan{1, 8}, 1);
  uint64_t told = 0;
  const Result<SweepResult> three =
      RunSweep(DemoScenario(), SeedSpan{1, 8}, 3, [&](uint64_t done, uint64_t) {
        told = std::max(told, done);
        return true;
      });
  ASSERT_TRUE(one.ok() && three.ok());
  EXPECT_EQ(told, 8u);
  ASSERT_EQ(three->seeds.size(), one->seeds.size());
  for (size_t i = 0; i < one->seeds.size(); ++i) {
    EXPECT_EQ(three->seeds[i].seed, one->seeds[i].seed);
    EXPECT_EQ(three->seeds[i].history_hash, one->seeds[i].history_hash);
    EXPECT_EQ(three->seeds[i].violations, one->seeds[i].violations);
  }
  EXPECT_EQ(three->first_failing, one->first_failing);
}

// Sized before any work: the estimate counts each limiter's traffic.
// A scenario without a claim holds each limiter to its own promise (docs/scenarios.md), for
// every model: the exact in-process limiter of each keeps it on steady traffic, a boundary
// attack and a burst, and nothing else is judged, whatever N in any W its traffic passes.
TEST(ScenarioWithoutAClaim, HoldsEveryModelToItsOwnPromiseAlone) {
  for (const AlgorithmInfo& a : Algorithms()) {
    const std::string policy = a.bucket ? "burst: 3, interval: 100ms" : "limit: 3, window: 300ms";
    const std::string text = "limiters:\n  - {algorithm: " + std::string(a.name) + ", " + policy +
                             "}\n"
                             "traffic:\n"
                             "  - {type: constant, user: steady, interval: 20ms, count: 60}\n"
                             "  - {type: boundary-attack, user: edge, edge: 600ms, spread: 50ms, "
                             "per_side: 3}\n"
                             "  - {type: burst, user: burst, at: 450ms, count: 8}\n";
    Result<Scenario> scenario = ParseScenario(text, "no-claim.yaml");
    ASSERT_TRUE(scenario.ok()) << a.name << ": " << scenario.status();
    EXPECT_FALSE(scenario->claim_given) << a.name;
    EXPECT_EQ(scenario->checks, std::vector<CheckId>{CheckId::kPromise}) << a.name;
    Result<RunResult> run = RunScenario(*scenario, 1);
    ASSERT_TRUE(run.ok()) << a.name << ": " << run.status();
    EXPECT_FALSE(run->claim_given);
    EXPECT_EQ(run->violation_count(), 0) << a.name << " broke its own promise";
    ASSERT_EQ(run->limiters.size(), 1u);
    EXPECT_EQ(run->limiters[0].checks.size(), 1u) << a.name << ": only its own promise";
  }
}

// The case: an exact token bucket of 3 refilling one every 100ms, a request every 20ms.
// It keeps its promise; 3 in any 300ms (what the scenario reader held it to without a claim) it
// passes, which is no violation of anything it promised. With that claim given, it is one.
TEST(ScenarioWithoutAClaim, ABucketIsNotHeldToItsBurstOverBurstIntervals) {
  const std::string limiter =
      "limiters:\n  - {algorithm: token-bucket, burst: 3, interval: 100ms}\n"
      "traffic:\n  - {type: constant, user: u, interval: 20ms, count: 50}\n";
  Result<Scenario> own = ParseScenario(limiter, "own.yaml");
  ASSERT_TRUE(own.ok()) << own.status();
  Result<RunResult> kept = RunScenario(*own, 1);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->violation_count(), 0);
  Result<Scenario> claimed =
      ParseScenario("claim: {limit: 3, window: 300ms}\n" + limiter, "claimed.yaml");
  ASSERT_TRUE(claimed.ok()) << claimed.status();
  EXPECT_TRUE(claimed->claim_given);
  Result<RunResult> broke = RunScenario(*claimed, 1);
  ASSERT_TRUE(broke.ok()) << broke.status();
  EXPECT_FALSE(Violations(broke->limiters[0], "any-window-cap").empty())
      << "a claim given is a check: the bucket's refills pass 3 in any 300ms";
  EXPECT_TRUE(Violations(broke->limiters[0], "promise").empty());

  // A check of the claim without a claim to hold them to is refused, saying what to do.
  for (const char* check : {"any-window-cap", "aligned-window-cap", "anchored-window-cap"}) {
    Result<Scenario> refused =
        ParseScenario(limiter + "checks: [promise, " + std::string(check) + "]\n", "refused.yaml");
    ASSERT_FALSE(refused.ok()) << check;
    EXPECT_NE(
        refused.status().message().find(
            std::string(check) + " holds every limiter to the scenario's claim, and it gives none"),
        std::string::npos)
        << refused.status();
  }
}

TEST(CheckRunSize, RefusesAScenarioOverTheBudgetWithTheEstimate) {
  const Scenario demo = DemoScenario();
  EXPECT_TRUE(CheckRunSize(demo, kDefaultMaxSimulated).ok());
  const Status s = CheckRunSize(demo, 10);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("limiters), over --max-simulated 10 (each costs about 400 bytes of "
                             "memory with this traffic's keys"),
            std::string::npos)
      << s;
}

// A replayed log's requests cost more than a generator's (their keys are its addresses and
// paths): the refusal says what they cost, where it said 400 bytes of every request.
TEST(CheckRunSize, SaysWhatAReplayedLogsRequestsCost) {
  Scenario replay;
  std::vector<Arrival> arrivals(1000);
  for (Arrival& a : arrivals) {
    a.user = "198.51.100.23";
    a.endpoint = "/api/v2/customers/12345/orders/" + std::string(60, 'x') + "/items/7";
  }
  replay.traffic.push_back(std::make_unique<ReplayTraffic>("log", std::move(arrivals)));
  replay.limiters.resize(3);
  const Status s = CheckRunSize(replay, 10);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("about 3000 requests (1000 arrivals for each of 3 limiters), over "
                             "--max-simulated 10 (each costs about 800 bytes of memory with this "
                             "traffic's keys, about 0.0 GB in all)"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace ratelab
