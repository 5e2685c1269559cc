#include "cli/run_command.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/cli_test_util.h"
#include "cli/ratelab_cli.h"
#include "testing/files.h"

namespace ratelab {
namespace {

TEST(RunCommand, JunitForOneRunAndForASweep) {
  const std::string dir = ::testing::TempDir();
  const std::string one = dir + "/run-one.xml", sweep = dir + "/run-sweep.xml";
  ASSERT_EQ(Ratelab({"run", ExampleScenario("boundary-attack"), "--junit", one}).exit,
            kExitViolation);
  std::string xml = testing_files::Read(one);
  EXPECT_NE(xml.find("<testcase classname=\"boundary-attack.memory-fixed-window\" "
                     "name=\"any-window-cap\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("reproduce: ratelab run "), std::string::npos);
  ASSERT_EQ(
      Ratelab({"run", ExampleScenario("restart-mid-window"), "--seeds", "1..5", "--junit", sweep})
          .exit,
      kExitViolation);
  xml = testing_files::Read(sweep);
  EXPECT_NE(xml.find("name=\"seed 1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("reproduce: ratelab run "), std::string::npos);
  EXPECT_NE(xml.find("--seed 1\n"), std::string::npos);
}

TEST(RunCommand, BoundaryAttackBreaksTheClaimForTheFixedWindowOnly) {
  CliOutcome r = Ratelab({"run", ExampleScenario("boundary-attack"), "--json"});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seed"], 1);
  EXPECT_EQ(j["history_hash"].get<std::string>().size(), 16u);
  for (const nlohmann::json& l : j["limiters"]) {
    const bool fixed = l["protocol"] == "memory-fixed-window";
    EXPECT_EQ(l["max_in_any_window"], fixed ? 10 : 5) << l["protocol"];
    EXPECT_EQ(l["violations"].empty(), !fixed) << l["protocol"];
  }
}

TEST(RunCommand, EveryExampleScenarioRunsWithTheExpectedVerdict) {
  // Each scenario's claim is a check: the buckets of steady-poisson and all but the sliding log
  // of bursty-many-users admit past it, as their descriptions say.
  const std::map<std::string, int> expected = {{"boundary-attack", kExitViolation},
                                               {"steady-poisson", kExitViolation},
                                               {"bursty-many-users", kExitViolation},
                                               {"restart-mid-window", kExitViolation},
                                               {"clock-skew", kExitViolation},
                                               {"store-outage", kExitViolation},
                                               {"store-restart", kExitViolation},
                                               {"access-log-replay", kExitViolation},
                                               {"rule-change", kExitOk}};
  for (const auto& [name, exit] : expected) {
    CliOutcome r = Ratelab({"run", ExampleScenario(name)});
    EXPECT_EQ(r.exit, exit) << name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("reproduce: ratelab run"), std::string::npos) << name;
  }
}

// The invariants each limiter of `scenario` broke, by limiter name.
std::map<std::string, std::set<std::string>> Broken(const std::string& scenario) {
  CliOutcome r = Ratelab({"run", ExampleScenario(scenario), "--json"});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  std::map<std::string, std::set<std::string>> out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& l : j["limiters"]) {
    std::set<std::string>& broken = out[l["name"].get<std::string>()];
    for (const nlohmann::json& v : l["violations"]) {
      broken.insert(v["invariant"].get<std::string>());
    }
  }
  return out;
}

TEST(RunCommand, StoreOutageShowsWhatEachFailurePolicyCosts) {
  const auto broken = Broken("store-outage");
  // The scenario gives no claim, so each is held to its own promise (and the false denials it
  // checks): failing open, or through an open breaker, a fixed window admits past its own
  // window during the outage; failing closed, it denies what it had room for.
  EXPECT_EQ(broken.at("kv-fixed-window-lua (fail-open)"),
            std::set<std::string>({"aligned-window-cap"}));
  EXPECT_EQ(broken.at("kv-fixed-window-lua (fail-closed)"),
            std::set<std::string>({"false-denials"}));
  EXPECT_EQ(broken.at("kv-fixed-window-lua (circuit-breaker)"),
            std::set<std::string>({"aligned-window-cap"}));
}

// Without a claim, each limiter is held to its own promise, and every view says so: the exit
// status, the verdict table (no claim column), the report's sentences and report.json.
TEST(RunCommand, AScenarioWithoutAClaimHoldsEachLimiterToItsOwnPromise) {
  const std::string path =
      testing_files::Write(::testing::TempDir(), "no-claim.yaml",
                           "limiters:\n"
                           "  - {algorithm: token-bucket, burst: 3, interval: 100ms}\n"
                           "  - {algorithm: fixed-window, limit: 3, window: 300ms}\n"
                           "traffic:\n  - {type: constant, user: u, interval: 20ms, count: 50}\n");
  const CliOutcome run = Ratelab({"run", path});
  EXPECT_EQ(run.exit, kExitOk) << run.out << run.err;
  EXPECT_NE(run.out.find("own promise"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("3 in any 300ms"), std::string::npos) << "no claim column: " << run.out;
  const std::string out = ::testing::TempDir() + "/no-claim-report";
  const CliOutcome compare = Ratelab({"compare", path, "--out", out, "--force"});
  ASSERT_EQ(compare.exit, kExitOk) << compare.err;
  const std::string md = testing_files::Read(out + "/report.md");
  EXPECT_NE(md.find("The scenario gives no claim, so each limiter is held to its own promise"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("All 2 limiters kept their own promises on every key."), std::string::npos)
      << md;
  EXPECT_NE(md.find("To keep its own promise"), std::string::npos) << md;
  EXPECT_EQ(md.find("the claim"), std::string::npos) << "no claim to speak of: " << md;
  const nlohmann::json j = nlohmann::json::parse(testing_files::Read(out + "/report.json"));
  EXPECT_EQ(j["claim"]["not_given"], true);
}

// --requests writes every request with its decision: what a replay of another project's test
// compares request by request.
TEST(RunCommand, RequestsWritesEveryRequestWithItsDecision) {
  const std::string path = testing_files::Write(
      ::testing::TempDir(), "three.yaml",
      "start: 2026-01-01T00:00:00Z\n"
      "limiters:\n  - {algorithm: fixed-window, limit: 2, window: 10s}\n"
      "traffic:\n  - {type: constant, user: u, start: 1s, interval: 1s, count: 3}\n");
  const std::string log = ::testing::TempDir() + "/three.jsonl";
  const CliOutcome r = Ratelab({"run", path, "--requests", log});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  std::istringstream lines(testing_files::Read(log));
  std::vector<nlohmann::json> requests;
  for (std::string line; std::getline(lines, line);)
    requests.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0]["limiter"], "memory-fixed-window");
  EXPECT_EQ(requests[0]["key"], "user:u:/api");
  EXPECT_EQ(requests[0]["outcome"], "admitted");
  EXPECT_EQ(requests[0]["remaining"], 1);
  EXPECT_DOUBLE_EQ(requests[0]["sent_s"].get<double>(), 1);
  EXPECT_DOUBLE_EQ(requests[0]["reset_s"].get<double>(), 10);
  EXPECT_EQ(requests[1]["remaining"], 0);
  EXPECT_EQ(requests[2]["outcome"], "denied");
  EXPECT_DOUBLE_EQ(requests[2]["retry_after_s"].get<double>(), 7)
      << "at 3s, the window ends at 10s";
  EXPECT_EQ(requests[2]["cost"], 1);

  const CliOutcome sweep = Ratelab({"run", path, "--seeds", "3", "--requests", log});
  EXPECT_EQ(sweep.exit, kExitBadInput) << "one run's requests, not a sweep's";
  EXPECT_NE(sweep.err.find("--requests writes the requests of one run: give --seed N, not --seeds"),
            std::string::npos)
      << sweep.err;
  const CliOutcome unwritable = Ratelab({"run", path, "--requests", "/no-such-dir/x.jsonl"});
  EXPECT_EQ(unwritable.exit, kExitBadInput);
  EXPECT_NE(unwritable.err.find("--requests: cannot write /no-such-dir/x.jsonl"), std::string::npos)
      << unwritable.err;
}

TEST(RunCommand, StoreRestartKeepsCountsOnlyWithDurabilityAlways) {
  const auto broken = Broken("store-restart");
  EXPECT_FALSE(broken.at("kv-gcra-lua (durability none)").empty());
  EXPECT_FALSE(broken.at("kv-gcra-lua (durability everysec)").empty());
  EXPECT_TRUE(broken.at("kv-gcra-lua").empty());
}

TEST(RunCommand, ReplayedScraperBurstsBreakTheFixedWindowNotTheSlidingLog) {
  const auto broken = Broken("access-log-replay");
  EXPECT_EQ(broken.at("memory-fixed-window"), std::set<std::string>({"any-window-cap"}));
  EXPECT_TRUE(broken.at("memory-sliding-log").empty());
}

TEST(RunCommand, ARestartIsExplainedInTheOutput) {
  CliOutcome r = Ratelab({"run", ExampleScenario("restart-mid-window")});
  EXPECT_NE(
      r.out.find(
          "note: node 0 crashed at 2026-01-01 00:00:20.000 (down 3s): memory-fixed-window keeps "
          "its counts in process memory, so the restart forgot them"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 request(s) got no answer"), std::string::npos) << r.out;
}

// A store no limiter would use is refused, naming why, rather than run in process under its name.
TEST(RunCommand, AStoreNoLimiterUsesIsRefused) {
  for (const std::string command : {"run", "compare"}) {
    const CliOutcome r = Ratelab({command, ExampleScenario("boundary-attack"), "--store", "redis",
                                  "--out", ::testing::TempDir() + "/unused-store-" + command});
    EXPECT_EQ(r.exit, kExitBadInput) << command << r.out;
    EXPECT_NE(r.err.find("store redis: no limiter of boundary-attack keeps its state there "
                         "(memory-fixed-window (memory)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("it takes a kv-* protocol"), std::string::npos) << r.err;
  }
}

TEST(RunCommand, WritesResultJsonIntoOut) {
  const std::string dir = ::testing::TempDir() + "/ratelab-run-out";
  std::filesystem::remove_all(dir);
  CliOutcome r = Ratelab({"run", ExampleScenario("rule-change"), "--seed", "3", "--out", dir});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  std::ifstream f(dir + "/result.json");
  ASSERT_TRUE(f.good());
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["limiters"].size(), 1u);
}

TEST(RunCommand, ASweepReportsProgressAndTheFirstFailingSeed) {
  CliOutcome r =
      Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..6", "--jobs", "2", "--json"});
  EXPECT_EQ(r.exit, kExitViolation);
  EXPECT_NE(r.err.find("progress: 6/6 seeds"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["seeds"].size(), 6u);
  EXPECT_EQ(j["first_failing"]["seed"], 1);
  // A sweep on two threads makes the same runs as one seed at a time.
  for (const nlohmann::json& s : j["seeds"]) {
    CliOutcome one = Ratelab({"run", ExampleScenario("clock-skew"), "--seed",
                              std::to_string(s["seed"].get<int>()), "--json"});
    EXPECT_EQ(nlohmann::json::parse(one.out)["history_hash"], s["history_hash"]);
  }
}

// Two shards of a sweep run its seeds between them, each as the whole sweep runs it.
TEST(RunCommand, TheShardsOfASweepRunItsSeedsBetweenThem) {
  const CliOutcome whole =
      Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..5", "--json"});
  ASSERT_EQ(whole.exit, kExitViolation) << whole.err;
  std::map<int, std::string> hashes;
  const nlohmann::json all = nlohmann::json::parse(whole.out);
  for (const nlohmann::json& s : all["seeds"])
    hashes.emplace(s["seed"].get<int>(), s["history_hash"]);
  std::map<int, std::string> sharded;
  for (const char* shard : {"1/2", "2/2"}) {
    const CliOutcome r = Ratelab(
        {"run", ExampleScenario("clock-skew"), "--seeds", "1..5", "--shard", shard, "--json"});
    EXPECT_EQ(r.exit, kExitViolation) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["shard"], shard);
    for (const nlohmann::json& s : j["seeds"]) {
      EXPECT_TRUE(sharded.emplace(s["seed"].get<int>(), s["history_hash"]).second) << s;
    }
  }
  EXPECT_EQ(sharded, hashes);
  const CliOutcome text =
      Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..5", "--shard", "2/2"});
  EXPECT_NE(text.out.find("seeds 1..5, shard 2/2 (2 seeds): "), std::string::npos) << text.out;
  // A shard is of a sweep's seeds, and must have some.
  const CliOutcome alone = Ratelab({"run", ExampleScenario("clock-skew"), "--shard", "1/2"});
  EXPECT_EQ(alone.exit, kExitBadInput);
  EXPECT_NE(alone.err.find("--shard requires --seeds"), std::string::npos) << alone.err;
  const CliOutcome none =
      Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..2", "--shard", "3/3"});
  EXPECT_EQ(none.exit, kExitBadInput);
  EXPECT_NE(none.err.find("so this shard would run none"), std::string::npos) << none.err;
}

// `merge` puts the shards of a sweep back together: the whole sweep's seeds, first failing seed
// and JUnit; and the shards of a search: the whole search's finding.
TEST(MergeCommand, TheShardsOfASweepOrASearchMergeIntoTheWhole) {
  const std::string dir = ::testing::TempDir() + "/merge";
  std::filesystem::remove_all(dir);
  const CliOutcome whole = Ratelab(
      {"run", ExampleScenario("clock-skew"), "--seeds", "1..5", "--out", dir + "/whole", "--json"});
  std::vector<std::string> args = {"merge"};
  for (const char* k : {"1", "2", "3"}) {
    const std::string out = dir + "/shard" + k;
    const CliOutcome r = Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..5",
                                  "--shard", std::string(k) + "/3", "--out", out});
    ASSERT_EQ(r.exit, kExitViolation) << r.err;
    args.push_back(out + "/result.json");
  }
  std::vector<std::string> merge_args = args;
  for (const char* extra : {"--json", "--junit"}) merge_args.push_back(extra);
  merge_args.push_back(dir + "/merged.xml");
  const CliOutcome merged = Ratelab(merge_args);
  EXPECT_EQ(merged.exit, kExitViolation) << merged.err;
  nlohmann::json expected = nlohmann::json::parse(whole.out);
  EXPECT_EQ(nlohmann::json::parse(merged.out), expected);
  std::ifstream xml(dir + "/merged.xml");
  const std::string junit((std::istreambuf_iterator<char>(xml)), {});
  EXPECT_NE(junit.find("reproduce: ratelab run " + ExampleScenario("clock-skew") + " --seed 4"),
            std::string::npos)
      << junit;
  // A shard left out is named.
  args.pop_back();
  const CliOutcome missing = Ratelab(args);
  EXPECT_EQ(missing.exit, kExitBadInput);
  EXPECT_NE(missing.err.find("shard 3/3 is missing"), std::string::npos) << missing.err;
  // A search's shards: the lowest seed any found is the whole search's.
  const std::string whole_check =
      Ratelab({"check", "kv-sliding-log-zset", "--seeds", "2..20", "--json"}).out;
  std::vector<std::string> checks = {"merge", "--json"};
  for (const char* k : {"1", "2"}) {
    const std::string path = dir + "/check" + k + ".json";
    std::ofstream(path) << Ratelab({"check", "kv-sliding-log-zset", "--seeds", "2..20", "--shard",
                                    std::string(k) + "/2", "--json"})
                               .out;
    checks.push_back(path);
  }
  const CliOutcome found = Ratelab(checks);
  EXPECT_EQ(found.exit, kExitViolation) << found.err;
  EXPECT_EQ(nlohmann::json::parse(found.out)["seed"], nlohmann::json::parse(whole_check)["seed"]);
  EXPECT_EQ(nlohmann::json::parse(found.out)["violation"],
            nlohmann::json::parse(whole_check)["violation"]);
}

TEST(RunCommand, SameSeedSameHistoryInTwoProcesses) {
  auto run = [](const std::string& seed) {
    const std::string cmd = std::string(RATELAB_BINARY) + " run " +
                            ExampleScenario("bursty-many-users") + " --seed " + seed + " --json";
    FILE* p = popen(cmd.c_str(), "r");
    std::string text;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) text.append(buf, n);
    pclose(p);
    return nlohmann::json::parse(text)["history_hash"].get<std::string>();
  };
  EXPECT_EQ(run("5"), run("5"));
  EXPECT_NE(run("5"), run("6"));
}

TEST(RunCommand, BadInputExitsTwoWithALocatedError) {
  const std::string path = ::testing::TempDir() + "/bad-scenario.yaml";
  std::ofstream(path) << "limiters:\n  - {algorithm: fixed-window, limit: -1, window: 1m}\n"
                         "traffic:\n  - {type: burst, user: u, at: 0s, count: 1}\n";
  CliOutcome r = Ratelab({"run", path});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "ratelab run: " + path +
                       ":2:38: 'limit' must be between 1 and 1099511627776 (got -1)\n");
  EXPECT_EQ(Ratelab({"run", path + ".missing"}).exit, kExitBadInput);
  EXPECT_EQ(Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "9..2"}).exit, kExitBadInput);
  // Sized before any work: a boundary attack of ten million a side is refused at once, with
  // the estimate and what to change, where it once ran out of memory.
  const std::string huge = ::testing::TempDir() + "/huge-scenario.yaml";
  std::ofstream(huge) << "limiters:\n  - {algorithm: fixed-window, limit: 5, window: 1m}\n"
                         "  - {algorithm: sliding-log, limit: 5, window: 1m}\n"
                         "traffic:\n  - {type: boundary-attack, user: a, edge: 1m, spread: 1s, "
                         "per_side: 10000000}\n";
  for (const char* command : {"run", "compare"}) {
    r = Ratelab({command, huge});
    EXPECT_EQ(r.exit, kExitBadInput) << command;
    EXPECT_NE(r.err.find("this run would simulate about 40000000 requests (20000000 arrivals for "
                         "each of 2 limiters), over --max-simulated 20000000"),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(Ratelab({"run", huge, "--max-simulated", "10"}).exit, kExitBadInput);
  // Numbers are what they say: no negative seed read as 2^64 - 1, no sweep too large to keep.
  r = Ratelab({"run", ExampleScenario("clock-skew"), "--seed", "-1"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--seed: '-1' is not a seed"), std::string::npos) << r.err;
  for (const char* range :
       {"1..18446744073709551615", "1..4000000000", "0..18446744073709551615"}) {
    r = Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", range});
    EXPECT_EQ(r.exit, kExitBadInput) << range;
    EXPECT_NE(r.err.find("more seeds than one command takes (at most 1000000)"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(Ratelab({"run", ExampleScenario("clock-skew"), "--seed", "1", "--seeds", "1..2"}).exit,
            kExitBadInput);
}

}  // namespace
}  // namespace ratelab
