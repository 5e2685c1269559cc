#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>

#include "absl/strings/match.h"
#include "sim/lua_spec.h"
#include "sim/rules_file.h"
#include "sim/scenario.h"
#include "testing/cpu_time.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr char kGood[] = R"(name: two nodes
description: skewed clocks
seed: 9
nodes:
  - {clock_offset: 0s}
  - {clock_offset: 2s, drift_ppm: 100}
latency:
  to_store: {base: 1ms, jitter: 2ms}
buggify: auto
max_transit: 250ms
limiters:
  - {algorithm: fixed-window, limit: 5, window: 1m}
  - {algorithm: gcra, burst: 5, interval: 12s}
claim: {limit: 5, window: 1m}
traffic:
  - {type: boundary-attack, user: attacker, edge: 2m, spread: 500ms, per_side: 5}
  - {type: zipf-users, users: 40, exponent: 1.1, duration: 5m, mean_gap: 1500ms}
faults:
  - {type: crash, node: 1, at: 1m, down_for: 5s}
  - {type: clock-jump, node: 0, at: 2m, by: -3s}
checks: [promise, any-window-cap, false-denials]
)";

TEST(ScenarioFile, ReadsEverySection) {
  Result<Scenario> s = ParseScenario(kGood, "good.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "two nodes");
  EXPECT_EQ(s->seed, 9u);
  ASSERT_EQ(s->nodes.size(), 2u);
  EXPECT_EQ(s->nodes[1].clock_offset, seconds(2));
  EXPECT_EQ(s->nodes[1].drift_ppm, 100);
  EXPECT_EQ(s->to_store.jitter, milliseconds(2));
  EXPECT_EQ(s->buggify, Scenario::BuggifyMode::kAuto);
  EXPECT_EQ(s->buggify_max_delay, milliseconds(250));
  ASSERT_EQ(s->limiters.size(), 2u);
  EXPECT_EQ(s->limiters[1].ProtocolName(), "memory-gcra");
  EXPECT_EQ(s->limiters[1].policy, Policy::Bucket(Algorithm::kGcra, 5, seconds(12)));
  EXPECT_EQ(s->claim_window, minutes(1));
  EXPECT_EQ(s->traffic.size(), 2u);
  ASSERT_EQ(s->faults.size(), 2u);
  EXPECT_EQ(s->faults[1].amount, -seconds(3));
  EXPECT_EQ(s->checks, (std::vector<CheckId>{CheckId::kPromise, CheckId::kAnyWindowCap,
                                             CheckId::kFalseDenials}));
  EXPECT_EQ(s->start, kDefaultScenarioStart) << "2026-01-01T00:00:00Z unless it says";
}

// The error for `text`, which must fail.
std::string ErrorOf(const std::string& text) {
  Result<Scenario> s = ParseScenario(text, "bad.yaml");
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? "" : std::string(s.status().message());
}

constexpr char kTraffic[] = "traffic:\n  - {type: burst, user: u, at: 1s, count: 3}\n";

// The error for a scenario of one limiter, `fields` its flow mapping's, and kTraffic.
std::string LimiterError(const std::string& fields) {
  return ErrorOf("limiters:\n  - {" + fields + "}\n" + kTraffic);
}

TEST(ScenarioFile, ErrorsNameFileLineColumnAndWhatWasExpected) {
  EXPECT_EQ(LimiterError("algorithm: fixed-window, limitt: 5, window: 1m"),
            "bad.yaml:2:31: unknown key 'limitt' in a limiter (expected one of: name, protocol, "
            "algorithm, limit, window, burst, interval, window_offset, on_store_error, breaker, "
            "durability, via, exec, exec_timeout)");
  EXPECT_EQ(LimiterError("algorithm: fixed-window, limit: 5, window: 1 min"),
            "bad.yaml:2:49: 'window' is not a duration: '1 min' (expected a number and a unit "
            "among h, m, s, ms, us, ns)");
  EXPECT_EQ(LimiterError("algorithm: leaky-bucket, limit: 5, window: 1m"),
            "bad.yaml:2:17: unknown algorithm 'leaky-bucket' (expected fixed-window, sliding-log, "
            "sliding-counter, token-bucket, gcra, anchored-window, sliding-log-closed, "
            "sliding-counter-anchored, token-bucket-intervals, token-bucket-credit, "
            "anchored-window-half-open or sliding-counter-anchored-floored)");
  EXPECT_EQ(LimiterError("algorithm: gcra, burst: 0, interval: 1s"),
            "bad.yaml:2:30: 'burst' must be between 1 and 1099511627776 (got 0)");
  EXPECT_EQ(ErrorOf(std::string("max_transit: 2h\nlimiters:\n  - {algorithm: gcra, burst: 1, "
                                "interval: 1s}\n") +
                    kTraffic),
            "bad.yaml:1:14: 'max_transit' must be from 0 to 1h (no request waits that long on "
            "its way to a store and is still answered)");
}

TEST(ScenarioFile, TheClockStartsWhereTheScenarioSays) {
  const std::string text = std::string("start: 2030-06-01T08:30:00Z\n") +
                           "limiters:\n  - {algorithm: fixed-window, limit: 5, window: 1m}\n" +
                           kTraffic;
  Result<Scenario> s = ParseScenario(text, "s.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(FormatUtc(s->start), "2030-06-01T08:30:00Z");
  EXPECT_EQ(ErrorOf("start: noon\n" + text.substr(text.find('\n') + 1)),
            "bad.yaml:1:8: 'start' must be a UTC instant such as 2026-01-01T00:00:00Z (got "
            "'noon')");
}

TEST(ScenarioFile, ErrorsInTrafficFaultsAndChecks) {
  const std::string head = "limiters:\n  - {algorithm: sliding-log, limit: 5, window: 1m}\n";
  EXPECT_EQ(ErrorOf(head + "traffic:\n  - {type: poison, user: u}\n"),
            "bad.yaml:4:12: unknown traffic type 'poison' (expected constant, poisson, "
            "boundary-attack, burst, zipf-users, diurnal or replay)");
  EXPECT_EQ(ErrorOf(head + "traffic:\n  - {type: poisson, user: u}\n"),
            "bad.yaml:4:5: missing 'duration' (a duration such as 500ms, 1m30s)");
  EXPECT_EQ(ErrorOf(head + "traffic:\n  - {type: diurnal, users: 3, duration: 1h, peak_gap: 1s, "
                           "trough: 2}\n"),
            "bad.yaml:4:67: 'trough' must be a number from 0 to 1 (a fraction of the peak rate)");
  // Not a number is no number from 0 to 1 either (every comparison with it is false).
  EXPECT_EQ(ErrorOf(head + "traffic:\n  - {type: diurnal, users: 3, duration: 1h, peak_gap: 1s, "
                           "trough: .nan}\n"),
            "bad.yaml:4:67: 'trough' must be a number from 0 to 1 (a fraction of the peak rate)");
  EXPECT_EQ(ErrorOf(head + "traffic:\n  - {type: zipf-users, users: 3, exponent: .nan, "
                           "duration: 1m, mean_gap: 1s}\n"),
            "bad.yaml:4:44: 'exponent' must be a number from 0 to 10");
  EXPECT_EQ(ErrorOf(head + kTraffic + "faults:\n  - {type: meteor, at: 1s}\n"),
            "bad.yaml:6:12: unknown fault type 'meteor' (expected clock-jump, crash, "
            "latency-spike, listen-down, store-outage, store-restart or store-stall)");
  EXPECT_EQ(ErrorOf(head + kTraffic + "faults:\n  - {type: store-failover, at: 1s}\n"),
            "bad.yaml:6:12: unknown fault type 'store-failover' (expected clock-jump, crash, "
            "latency-spike, listen-down, store-outage, store-restart or store-stall; a search "
            "draws a store-failover (check --faults))");
  EXPECT_EQ(ErrorOf(head + kTraffic + "faults:\n  - {type: store-outage, at: 1s}\n"),
            "bad.yaml:6:5: missing 'for' (a duration such as 500ms, 1m30s)");
  EXPECT_EQ(ErrorOf(head + kTraffic + "faults:\n  - {type: crash, node: 3, at: 1s}\n"),
            "bad.yaml:6:25: 'node' must be between 0 and 0 (got 3)");
  EXPECT_EQ(ErrorOf(head + kTraffic + "checks: [promise, vibes]\n"),
            "bad.yaml:5:19: unknown check 'vibes' (expected one of promise, aligned-window-cap, "
            "anchored-window-cap, any-window-cap, bucket-conformance, false-denials, retry-after, "
            "key-expiry or survives-restart; the boundary-burst ratio is always reported)");
  EXPECT_EQ(ErrorOf(head), "bad.yaml:1:1: 'traffic' must list at least one generator");
}

TEST(ScenarioFile, DuplicateKeysAndNamesAndOutOfRangeNumbersSayWhatIsWrong) {
  const std::string traffic = "traffic:\n  - {type: burst, user: u, at: 0s, count: 3}\n";
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n" + traffic +
                    "limiters:\n  - {algorithm: gcra, burst: 2, interval: 1s}\n"),
            "bad.yaml:5:1: duplicate key 'limiters' (first at line 1)");
  EXPECT_EQ(
      ErrorOf("limiters:\n  - {algorithm: gcra, burst: 1, burst: 9, interval: 1s}\n" + traffic),
      "bad.yaml:2:33: duplicate key 'burst' (first at line 2)");
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n"
                    "  - {algorithm: gcra, burst: 2, interval: 1s}\n" +
                    traffic),
            "bad.yaml:3:5: two limiters are called 'memory-gcra' (this one and the one at line "
            "2); give one a name: of its own");
  EXPECT_TRUE(ParseScenario("limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n"
                            "  - {name: roomy, algorithm: gcra, burst: 2, interval: 1s}\n" +
                                traffic,
                            "ok.yaml")
                  .ok());
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: fixed-window, limit: 99999999999999999999, "
                    "window: 1s}\n" +
                    traffic),
            "bad.yaml:2:38: 'limit' is too large: 99999999999999999999 (it must be between 1 "
            "and 1099511627776)");
  EXPECT_EQ(
      ErrorOf("limiters:\n  - {algorithm: fixed-window, limit: many, window: 1s}\n" + traffic),
      "bad.yaml:2:38: 'limit' must be an integer");
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: leaky-bucket, limit: 1, window: 1s}\n" + traffic),
            "bad.yaml:2:17: unknown algorithm 'leaky-bucket' (expected fixed-window, sliding-log, "
            "sliding-counter, token-bucket, gcra, anchored-window, sliding-log-closed, "
            "sliding-counter-anchored, token-bucket-intervals, token-bucket-credit, "
            "anchored-window-half-open or sliding-counter-anchored-floored)");
}

TEST(ScenarioFile, StoreNamesWhereTheKvProtocolsRun) {
  const std::string limiters =
      "limiters:\n  - {protocol: kv-gcra-lua, algorithm: gcra, burst: 1, "
      "interval: 1s}\n";
  Result<Scenario> memory = ParseScenario(limiters + kTraffic, "s.yaml");
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_EQ(memory->store.kind, StoreName::Kind::kMemory);
  Result<Scenario> redis = ParseScenario("store: redis\n" + limiters + kTraffic, "s.yaml");
  ASSERT_TRUE(redis.ok()) << redis.status();
  EXPECT_EQ(redis->store.kind, StoreName::Kind::kPrivateRedis);
  EXPECT_EQ(redis->stores, nullptr) << "opening a server's stores is its runner's business";
  Result<Scenario> url = ParseScenario(
      "store: {kv: 'redis://10.1.2.3:6380/2', durability: none}\n" + limiters + kTraffic, "s.yaml");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->store, (StoreName{StoreName::Kind::kUrl, "redis://10.1.2.3:6380/2"}));
  EXPECT_EQ(url->limiters.front().durability, Durability::kNone);
  EXPECT_EQ(ErrorOf("store: {kv: 'redis://h:0'}\n" + limiters + kTraffic),
            "bad.yaml:1:13: unknown kv store 'redis://h:0' (expected memory, redis, postgres, a "
            "Redis or Redis Cluster URL, or a postgresql:// URL: bad Redis URL 'redis://h:0': the "
            "port must be a number from 1 "
            "to 65535 "
            "(expected redis://host[:port][/db] or unix:///path.sock[?db=N]))");
  // PostgreSQL, for the SQL protocols: a private server, or a database's URL.
  Result<Scenario> postgres = ParseScenario("store: postgres\n" + limiters + kTraffic, "s.yaml");
  ASSERT_TRUE(postgres.ok()) << postgres.status();
  EXPECT_EQ(postgres->store.kind, StoreName::Kind::kPrivatePostgres);
  Result<Scenario> database =
      ParseScenario("store: 'postgresql://rl@db.example/limits'\n" + limiters + kTraffic, "s.yaml");
  ASSERT_TRUE(database.ok()) << database.status();
  EXPECT_EQ(database->store,
            (StoreName{StoreName::Kind::kPostgresUrl, "postgresql://rl@db.example/limits"}));
  Result<Scenario> cluster = ParseScenario(
      "store: {kv: 'redis-cluster://10.1.2.3:7000,10.1.2.4:7000'}\n" + limiters + kTraffic,
      "s.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->store.kind, StoreName::Kind::kUrl);
  EXPECT_NE(ErrorOf("store: {kv: 'redis-cluster://h:1/2'}\n" + limiters + kTraffic)
                .find("bad Redis Cluster URL 'redis-cluster://h:1/2': a cluster has only "
                      "database 0"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("store: mongo\n" + limiters + kTraffic).substr(0, 38),
            "bad.yaml:1:8: unknown kv store 'mongo'");
}

TEST(ScenarioFile, ErrorsInStoresAndFailurePolicies) {
  EXPECT_EQ(ErrorOf(std::string("store: {durability: sometimes}\n"
                                "limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n") +
                    kTraffic),
            "bad.yaml:1:21: unknown durability 'sometimes' (expected none, everysec or always)");
  EXPECT_EQ(LimiterError("protocol: kv-gcra-lua, algorithm: gcra, burst: "
                         "1, interval: 1s, on_store_error: shrug"),
            "bad.yaml:2:86: unknown failure policy 'shrug' (expected error, fail-open, "
            "fail-closed or circuit-breaker)");
  EXPECT_EQ(LimiterError("protocol: kv-gcra-lua, algorithm: gcra, burst: "
                         "1, interval: 1s, breaker: {threshold: 2}"),
            "bad.yaml:2:79: 'breaker' needs on_store_error: circuit-breaker");
  EXPECT_EQ(LimiterError("protocol: kv-gcra-lua, algorithm: gcra, burst: "
                         "1, interval: 1500ns"),
            "bad.yaml:2:16: kv-gcra-lua works in whole microseconds; the interval 1.5us is not "
            "one");
  EXPECT_EQ(LimiterError("protocol: kv-gcra-lua, algorithm: sliding-log, "
                         "limit: 1, window: 1s"),
            "bad.yaml:2:16: protocol 'kv-gcra-lua' implements gcra, not sliding-log");
}

TEST(ScenarioFile, ALimitersWindowsStartWhereItsWindowOffsetSays) {
  Result<Scenario> s =
      ParseScenario(std::string("limiters:\n  - {algorithm: fixed-window, limit: 2, window: 10s, "
                                "window_offset: '{key_crc32 % window_ms}ms'}\n") +
                        kTraffic,
                    "good.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->limiters[0].policy.offset.text, "{key_crc32 % window_ms}ms");
  EXPECT_EQ(s->limiters[0].policy.OffsetOf("user:u1:/api"), milliseconds(1181));
  EXPECT_EQ(LimiterError("algorithm: gcra, burst: 1, interval: 1s, "
                         "window_offset: 1s"),
            "bad.yaml:2:62: 'window_offset': a window offset shifts aligned windows: "
            "fixed-window's and sliding-counter's, not gcra's");
  EXPECT_EQ(LimiterError("algorithm: fixed-window, limit: 1, window: 1s, "
                         "window_offset: '{now_ms}'")
                .substr(0, 50),
            "bad.yaml:2:68: 'window_offset': '{now_ms}' uses {n");
}

TEST(ScenarioFile, ReplayErrorsNameTheLogLine) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream log(dir + "/bad.csv");
    log << "timestamp,key\n1700000000.5,alice\nyesterday,bob\n";
  }
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n"
                    "traffic:\n  - {type: replay, file: " +
                    dir + "/bad.csv}\n"),
            "bad.yaml:4:26: " + dir +
                "/bad.csv:3: bad timestamp 'yesterday' (expected unix seconds such as "
                "1700000000.250, or RFC 3339 such as 2023-11-14T22:13:20Z, from 1970 to 2199)");
  EXPECT_EQ(ErrorOf("limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n"
                    "traffic:\n  - {type: replay, file: /nonexistent.log}\n"),
            "bad.yaml:4:26: /nonexistent.log: cannot open the access log");
}

TEST(ScenarioFile, AScenarioThatOpensWithALogStartsOnItsDayUnlessItSaysOtherwise) {
  const std::string dir = ::testing::TempDir();
  {
    std::ofstream log(dir + "/day.csv");
    log << "timestamp,key\n2026-03-14T09:00:00+01:00,alice\n2026-03-14T09:00:05+01:00,bob\n";
  }
  const std::string yaml =
      "limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n"
      "traffic:\n  - {type: replay, file: " +
      dir + "/day.csv}\n";
  Result<Scenario> s = ParseScenario(yaml, "day.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  // Midnight of the log's first day in the log's own zone, which the scenario shows its times in.
  EXPECT_EQ(FormatUtc(s->start), "2026-03-13T23:00:00Z");
  EXPECT_EQ(s->utc_offset, std::chrono::hours(1));
  std::vector<Arrival> arrivals;
  Random random(1);
  s->traffic[0]->Generate(random, arrivals);
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(FormatUtc(arrivals[0].at), "2026-03-14T08:00:00Z");  // as logged

  s = ParseScenario("start: 2026-01-01T00:00:00Z\n" + yaml, "day.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(FormatUtc(s->start), "2026-01-01T00:00:00Z");
  arrivals.clear();
  s->traffic[0]->Generate(random, arrivals);
  EXPECT_EQ(FormatUtc(arrivals[0].at), "2026-01-01T08:00:00Z");  // the same time of day
  EXPECT_EQ(s->utc_offset, std::nullopt);                        // a start of its own: UTC
}

TEST(ScenarioFile, MalformedYamlIsLocatedToo) {
  EXPECT_EQ(ErrorOf("limiters: [\n  {algorithm: gcra\n"),
            "bad.yaml:3:1: not YAML: end of map flow not found");
  EXPECT_EQ(ErrorOf("- just\n- a list\n"),
            "bad.yaml:1:1: a scenario must be a mapping of keys such as limiters:");
}

TEST(ScenarioFile, AMissingFileSaysSo) {
  Result<Scenario> s = LoadScenario("/nonexistent/scenario.yaml");
  EXPECT_EQ(s.status().message(), "/nonexistent/scenario.yaml: cannot open the scenario file");
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// Nine aliases of nine, twelve levels deep: 655 bytes that a reader walking them expands to
// 9^12 nodes (`run` took hours of CPU on one, `rules validate` 22 s on a smaller one).
std::string AliasBomb(const std::string& key) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 12; ++level) {
    const std::string below = "*a" + std::to_string(level - 1);
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i > 0 ? ", " : "") + below;
    text += "]\n";
  }
  return text + key + ": *a12\n";
}

TEST(ScenarioFile, AnAliasBombIsRefusedWithItsLineBeforeAnythingReadsIt) {
  const std::string bomb = AliasBomb("limiters");
  EXPECT_LT(bomb.size(), 1000u);
  for (const auto& parse : std::vector<std::function<Status(const std::string&)>>{
           [](const std::string& text) { return ParseScenario(text, "bomb.yaml").status(); },
           [](const std::string& text) { return ParseRules(text, "bomb.yaml").status(); },
           [](const std::string& text) { return ParseLuaSpec(text, "bomb.yaml", ".").status(); }}) {
    const auto start = ThreadCpuTime();
    const Status s = parse(bomb);
    EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(2));
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(absl::StartsWith(s.message(), "bomb.yaml:")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(),
                                  ": not YAML ratelab reads: its aliases repeat what they name "
                                  "past 1000000 nodes (an alias bomb), here"))
        << s;
  }
  // Aliases that repeat a little are read as before.
  const Result<RuleSet> few = ParseRules(
      "defaults: &d {algorithm: fixed-window, max_requests: 5, window_seconds: 60}\n"
      "rules:\n  - {<<: *d, scope_type: user, endpoint: /a}\n",
      "few.yaml");
  EXPECT_TRUE(few.ok() || !absl::StrContains(few.status().message(), "alias bomb")) << few.status();
}

}  // namespace
}  // namespace ratelab
