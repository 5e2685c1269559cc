// examples/: the rules file, the scenario, the Lua script with its spec and the probe command that
// the README and docs use, each run as their comments say it runs, with the verdict they say.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/process.h"
#include "testing/serve_process.h"

namespace ratelab {
namespace {

std::string Example(const std::string& name) {
  return std::string(RATELAB_SOURCE_DIR) + "/examples/" + name;
}

TEST(Examples, TheRulesFileIsValid) {
  const CliOutcome r = Ratelab({"rules", "validate", Example("rules.yaml")});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find("4 rules, all valid"), std::string::npos) << r.out;
}

// As its comment says: only the sliding log keeps the claim.
TEST(Examples, TheScenarioShowsWhichAlgorithmKeepsTheClaim) {
  const CliOutcome r = Ratelab({"run", Example("scenario.yaml"), "--json"});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  std::map<std::string, bool> kept;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const nlohmann::json& l : j["limiters"]) {
    bool all = true;
    for (const nlohmann::json& c : l["checks"]) all = all && c["violations"] == 0;
    kept[l["name"]] = all;
  }
  EXPECT_EQ(kept, (std::map<std::string, bool>{{"memory-fixed-window", false},
                                               {"memory-sliding-log", true},
                                               {"memory-token-bucket", false}}));
  const std::string out = testing_files::TempDir("example-compare").string();
  EXPECT_EQ(Ratelab({"compare", Example("scenario.yaml"), "--out", out}).exit, kExitOk);
}

TEST(Examples, TheLuaScriptKeepsItsPromise) {
  const CliOutcome r = Ratelab({"check", "--lua-spec", Example("my_limiter.yaml"), "--limit", "5",
                                "--window", "1m", "--seeds", "50"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing found"), std::string::npos) << r.out;
}

// The probe command, against `serve` on the example rules, finds nothing.
TEST(Examples, TheProbeCommandHoldsServeToItsRules) {
  const std::filesystem::path dir = testing_files::TempDir("example-probe");
  std::filesystem::create_directories(dir);
  ServeProcess serve({"--rules", Example("rules.yaml")}, dir / "serve.txt");
  ASSERT_GT(serve.port(), 0);
  const testing_process::Finished probe = testing_process::RunToEnd(
      {"/bin/sh", Example("probe.sh"), "http://127.0.0.1:" + std::to_string(serve.port())},
      dir.string(), {std::string("RATELAB=") + RATELAB_BINARY, "PATH=/usr/bin:/bin"});
  const std::string& said = probe.output;
  EXPECT_EQ(probe.exit, kExitOk) << said;
  EXPECT_NE(said.find("nothing found"), std::string::npos) << said;
  EXPECT_NE(said.find("aligned-window-cap (fixed-window 5 per 1m per user): kept"),
            std::string::npos)
      << said;
}

}  // namespace
}  // namespace ratelab
