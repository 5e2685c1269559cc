// The simulator on a real redis-server: the same seed gives the same history as on MemoryKv,
// every kv protocol's `check` verdict is the same on both, and an existing server (a URL) is used
// with care. Each test starts its own servers (testing/redis.h).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_test_util.h"
#include "cli/ratelab_cli.h"
#include "impl/store/redis_cluster.h"
#include "impl/store/redis_kv.h"
#include "live/server_stores.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "testing/files.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

Result<RunResult> RunOn(const std::string& name, const std::string& store, uint64_t seed) {
  Result<Scenario> s = LoadScenario(ExampleScenario(name));
  if (!s.ok()) return s.status();
  if (store != "memory") {
    Result<std::shared_ptr<StoreSource>> source = OpenStoreSource(store);
    if (!source.ok()) return source.status();
    s->stores = *source;
  }
  return RunScenario(*s, seed);
}

// The example scenarios with kv protocols: outages with each failure policy, two skewed nodes,
// and store restarts (without persistence and with every write fsynced), over a few seeds.
TEST(RedisStore, SameSeedSameHistoryAsOnMemoryKv) {
  RATELAB_REQUIRE_REDIS_SERVER();
  for (const std::string name : {"store-outage", "clock-skew", "store-restart"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const Result<RunResult> memory = RunOn(name, "memory", seed);
      const Result<RunResult> redis = RunOn(name, "redis", seed);
      ASSERT_TRUE(memory.ok()) << memory.status();
      ASSERT_TRUE(redis.ok()) << redis.status();
      ASSERT_EQ(memory->limiters.size(), redis->limiters.size());
      for (size_t i = 0; i < memory->limiters.size(); ++i) {
        const LimiterOutcome& m = memory->limiters[i];
        const LimiterOutcome& r = redis->limiters[i];
        // A real server's everysec under kill -9 depends on the machine's timing (see
        // redis_server.h); the rest must match exactly.
        if (m.name.find("everysec") != std::string::npos) continue;
        EXPECT_EQ(m.history_hash(), r.history_hash()) << name << " " << m.name;
        EXPECT_EQ(m.admitted, r.admitted) << name << " " << m.name;
        EXPECT_EQ(m.state.keys, r.state.keys) << name << " " << m.name;
        EXPECT_EQ(m.state.bytes, r.state.bytes) << name << " " << m.name;
        EXPECT_EQ(m.violation_count(), r.violation_count()) << name << " " << m.name;
      }
    }
  }
}

// What `check` prints, without the timing and the reproduce line's --store.
std::string Verdict(std::vector<std::string> args, const std::string& store) {
  args.insert(args.begin(), "check");
  args.push_back("--store");
  args.push_back(store);
  const CliOutcome r = Ratelab(args);
  EXPECT_NE(r.exit, kExitBadInput) << r.err;
  return std::to_string(r.exit) + "\n" +
         std::regex_replace(r.out, std::regex(" --store " + store), "");
}

TEST(RedisStore, EveryKvProtocolsVerdictIsTheSameAsOnMemoryKv) {
  RATELAB_REQUIRE_REDIS_SERVER();
  // Each kv protocol with the options that show its flaw, or with store restarts and crashes
  // for the correct ones; durability none so that restarts lose what they lose on both.
  const std::vector<std::vector<std::string>> cases = {
      {"kv-fixed-window-incr-pexpire", "--faults", "crash", "--seeds", "60"},
      {"kv-sliding-log-zset", "--seeds", "20"},
      {"kv-sliding-counter", "--seeds", "20"},
      {"kv-token-bucket-hgetall-hset", "--burst", "1", "--seeds", "20"},
      {"kv-token-bucket-lua", "--burst", "2", "--rate", "100", "--faults", "none", "--seeds", "20"},
      {"kv-token-bucket-lua", "--burst", "3", "--rate", "2", "--seeds", "40"},
      {"kv-fixed-window-lua", "--claim", "--limit", "1", "--seeds", "20"},
      {"kv-fixed-window-lua", "--limit", "2", "--window", "10ms", "--faults",
       "crash,store-restart,store-outage", "--durability", "none", "--seeds", "40"},
      {"kv-sliding-log-lua", "--limit", "2", "--window", "10ms", "--seeds", "40"},
      {"kv-gcra-lua", "--burst", "1", "--rate", "100", "--faults",
       "crash,store-restart,store-outage", "--seeds", "40"},
      {"kv-gcra-lua", "--burst", "1", "--rate", "100", "--checks", "survives-restart", "--faults",
       "store-restart", "--durability", "none", "--seeds", "40"},
  };
  for (const std::vector<std::string>& c : cases) {
    std::string name;
    for (const std::string& a : c) name += a + " ";
    EXPECT_EQ(Verdict(c, "memory"), Verdict(c, "redis")) << name;
  }
}

TEST(RedisStore, AnExistingServerMustBeEmptyAndCannotBeRestarted) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv kv(server->endpoint(3));
  ASSERT_TRUE(kv.Execute(std::vector<std::string>{"SET", "theirs", "1"}).ok());
  // Database 3 holds a key that is not ratelab's: refused, and left alone.
  CliOutcome r = Ratelab({"run", ExampleScenario("store-outage"), "--store", server->url(3)});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("holds 1 keys"), std::string::npos) << r.err;
  EXPECT_EQ(kv.Execute(std::vector<std::string>{"GET", "theirs"})->text, "1");
  // An empty database is used, and the run says its clock is not virtual.
  r = Ratelab({"run", ExampleScenario("store-outage"), "--store", server->url(4)});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.out.find("not on virtual time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--store " + server->url(4)), std::string::npos) << r.out;
  // It cannot be restarted: a scenario that restarts the store is refused; check leaves
  // restarts out of its default faults, and refuses them when asked for.
  r = Ratelab({"run", ExampleScenario("store-restart"), "--store", server->url(4)});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("cannot restart"), std::string::npos) << r.err;
  r = Ratelab({"check", "kv-gcra-lua", "--seeds", "5", "--store", server->url(4)});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.err.find("no store restarts"), std::string::npos) << r.err;
  r = Ratelab({"check", "kv-gcra-lua", "--faults", "store-restart", "--store", server->url(4)});
  EXPECT_EQ(r.exit, kExitBadInput);
  // Each run emptied the database after itself.
  RedisKv db4(server->endpoint(4));
  EXPECT_EQ(db4.Execute(std::vector<std::string>{"DBSIZE"})->integer, 0);
}

// The simulator and stress on a real 3-master Redis Cluster: the same findings as on one server.
TEST(RedisStore, TheCheckingCommandsRunOnARedisCluster) {
  RATELAB_START_REDIS_CLUSTER(cluster);
  const std::string url = cluster->url();
  CliOutcome r = Ratelab({"check", "kv-token-bucket-hgetall-hset", "--burst", "1", "--faults",
                          "crash", "--seeds", "20", "--store", url});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  r = Ratelab(
      {"check", "kv-gcra-lua", "--faults", "crash,store-outage", "--seeds", "20", "--store", url});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  r = Ratelab({"run", ExampleScenario("clock-skew"), "--store", url});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.out.find("kv-fixed-window-lua: [any-window-cap]"), std::string::npos) << r.out;
  r = Ratelab({"stress", "kv-token-bucket-hgetall-hset", "--burst", "10", "--rate", "100",
               "--duration", "2s", "--store", url});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  r = Ratelab({"stress", "kv-sliding-log-lua", "--users", "6", "--duration", "1s", "--store", url});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // Every run left the cluster as it found it: empty, on every master.
  RedisClusterKv kv(ParseRedisClusterUrl(url).value());
  EXPECT_EQ(kv.Execute(std::vector<std::string>{"DBSIZE"})->integer, 0);
  ASSERT_TRUE(kv.Execute(std::vector<std::string>{"SET", "theirs", "1"}).ok());
  r = Ratelab({"stress", "kv-gcra-lua", "--duration", "100ms", "--store", url});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("holds 1 keys"), std::string::npos) << r.err;
}

// The one request that checks a script before a search runs on the store the search will use: a
// script built on a command MemoryKv does not have (ZMSCORE) is refused on memory,
// saying why, and searched on a real redis-server, where it runs.
TEST(RedisStore, AScriptIsTriedOnTheStoreItWillRunOn) {
  RATELAB_REQUIRE_REDIS_SERVER();
  const auto file = testing_files::Write(testing_files::TempDir("lua"), "zmscore.lua",
                                         "redis.call('ZMSCORE', KEYS[1] .. ':members', 'x')\n"
                                         "local n = tonumber(redis.call('GET', KEYS[1]) or '0')\n"
                                         "if n >= tonumber(ARGV[1]) then return 0 end\n"
                                         "if n == 0 then redis.call('SETEX', KEYS[1], ARGV[2], 1)\n"
                                         "else redis.call('INCR', KEYS[1]) end\n"
                                         "return 1\n");
  std::vector<std::string> args = {"check",
                                   "--lua",
                                   file.string(),
                                   "--model",
                                   "anchored-window",
                                   "--args",
                                   "{limit},{window_s}",
                                   "--window",
                                   "10s",
                                   "--nodes",
                                   "1",
                                   "--faults",
                                   "none",
                                   "--seeds",
                                   "5"};
  CliOutcome r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitBadInput) << r.out << r.err;
  EXPECT_NE(r.err.find("the script failed: ERR unknown command 'ZMSCORE'"), std::string::npos)
      << r.err;
  args.insert(args.end(), {"--store", "redis"});
  r = Ratelab(args);
  EXPECT_NE(r.exit, kExitBadInput) << r.out << r.err;
  EXPECT_NE(r.exit, kExitLimiterFailed) << r.out << r.err;
  EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << r.err;
}

TEST(RedisStore, AServerThatIsNotThereIsAnErrorNotAVerdict) {
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"check", "kv-gcra-lua", "--faults", "crash", "--seeds", "3"},
        std::vector<std::string>{"stress", "kv-gcra-lua"}}) {
    std::vector<std::string> args = command;
    args.push_back("--store");
    args.push_back("unix:///nonexistent/redis.sock");
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << command[0];
    EXPECT_NE(r.err.find("cannot connect to Redis at unix:///nonexistent/redis.sock"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace ratelab
