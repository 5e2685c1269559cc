// The script corpus (property-tests/scripts/corpus.yaml): scripts in the styles real libraries
// use, each checked under the faults its entry names and judged as its entry expects: correct ones
// pass hundreds of seeds, flawed ones are caught at the policy given, failing ones are failures.
// Each also runs on a real redis-server (on virtual time), where none may be refused. Prints the
// corpus as a table (script, style, expected, verdict, witness size, seconds).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

const std::string kCorpus = std::string(RATELAB_SOURCE_DIR) + "/property-tests/scripts/";

struct Entry {
  std::string spec, style, faults, checks, expect, invariant;
  std::vector<std::string> policy;
};

std::vector<Entry> Corpus() {
  std::vector<Entry> out;
  for (const YAML::Node& n : YAML::LoadFile(kCorpus + "corpus.yaml")) {
    Entry e;
    e.spec = n["spec"].as<std::string>();
    e.style = n["style"].as<std::string>();
    e.faults = n["faults"].as<std::string>();
    e.checks = n["checks"].as<std::string>("");
    e.expect = n["expect"].as<std::string>();
    e.invariant = n["invariant"].as<std::string>("");
    for (const YAML::Node& p : n["policy"]) e.policy.push_back(p.as<std::string>());
    out.push_back(std::move(e));
  }
  return out;
}

CliOutcome CheckEntry(const Entry& e, const std::string& seeds, std::vector<std::string> more) {
  std::vector<std::string> args = {"check", "--lua-spec", kCorpus + e.spec, "--seeds",
                                   seeds,   "--faults",   e.faults,         "--json"};
  args.insert(args.end(), e.policy.begin(), e.policy.end());
  if (!e.checks.empty()) args.insert(args.end(), {"--checks", e.checks});
  args.insert(args.end(), more.begin(), more.end());
  return Ratelab(args);
}

// What `check` said of an entry, as the corpus states it.
void ExpectVerdict(const Entry& e, const CliOutcome& r, const std::string& where) {
  ASSERT_NE(r.exit, kExitBadInput) << e.spec << where << ": refused\n" << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], e.expect) << e.spec << where << "\n" << r.out;
  if (e.expect == "violation" && j["verdict"] == "violation") {
    EXPECT_EQ(j["violation"]["invariant"], e.invariant) << e.spec << where;
  }
}

TEST(ScriptCorpus, EveryScriptGetsTheVerdictItsEntryExpects) {
  const std::vector<Entry> corpus = Corpus();
  ASSERT_GE(corpus.size(), 8u);
  std::printf(
      "| script | style | expected | verdict | witness | seconds |\n|---|---|---|---|---|---|\n");
  for (const Entry& e : corpus) {
    const auto began = std::chrono::steady_clock::now();
    const CliOutcome r = CheckEntry(e, "300", {});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    ExpectVerdict(e, r, "");
    if (r.exit == kExitBadInput) continue;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    const std::string witness = j["verdict"] == "violation"
                                    ? std::to_string(j["violation"]["witness"].size()) + " requests"
                                : j["verdict"] == "failure" ? "1 request"
                                                            : "-";
    std::printf("| %s | %s | %s | %s | %s | %.2f |\n", e.spec.c_str(), e.style.c_str(),
                e.expect.c_str(), j["verdict"].get<std::string>().c_str(), witness.c_str(),
                seconds);
  }
}

TEST(ScriptCorpus, NoScriptIsRefusedOnARealRedisServerWhereEachFindingReplays) {
  RATELAB_REQUIRE_REDIS_SERVER();
  for (const Entry& e : Corpus()) {
    // A finding's seed replays on a real server (on virtual time) to the same verdict; a correct
    // script passes a few seeds there too.
    const CliOutcome memory = CheckEntry(e, "300", {});
    ASSERT_NE(memory.exit, kExitBadInput) << e.spec << memory.err;
    const nlohmann::json j = nlohmann::json::parse(memory.out);
    const std::vector<std::string> where =
        j["verdict"] == "none"
            ? std::vector<std::string>{"--store", "redis"}
            : std::vector<std::string>{"--store", "redis", "--seed", j["seed"].dump()};
    ExpectVerdict(e, CheckEntry(e, "3", where), " on redis-server");
  }
}

}  // namespace
}  // namespace ratelab
