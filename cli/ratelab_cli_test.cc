#include "cli/ratelab_cli.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_util.h"

namespace ratelab {
namespace {

TEST(RatelabCli, HelpNamesEveryCommand) {
  CliOutcome r = Ratelab({"--help"});
  EXPECT_EQ(r.exit, kExitOk);
  EXPECT_NE(r.out.find("deterministic simulation"), std::string::npos);
  EXPECT_NE(r.out.find("list"), std::string::npos);
  EXPECT_NE(r.out.find("demo"), std::string::npos);
}

TEST(RatelabCli, HelpCommandPrintsWhatHelpFlagsPrint) {
  EXPECT_EQ(Ratelab({"help"}).out, Ratelab({"--help"}).out);
  for (const char* command : {"check", "run", "compare", "demo", "report", "stress", "list"}) {
    const CliOutcome help = Ratelab({"help", command});
    EXPECT_EQ(help.exit, kExitOk) << command;
    EXPECT_EQ(help.out, Ratelab({command, "--help"}).out) << command;
    EXPECT_NE(help.out.find(std::string("ratelab ") + command), std::string::npos) << help.out;
  }
  const CliOutcome unknown = Ratelab({"help", "chekc"});
  EXPECT_EQ(unknown.exit, kExitBadInput);
  EXPECT_NE(unknown.err.find("unknown command 'chekc' (expected one of list, demo, compare"),
            std::string::npos)
      << unknown.err;
}

TEST(RatelabCli, VersionPrintsTheProjectVersion) {
  CliOutcome r = Ratelab({"--version"});
  EXPECT_EQ(r.exit, kExitOk);
  EXPECT_EQ(r.out.rfind("ratelab ", 0), 0u) << r.out;
}

TEST(RatelabCli, ListShowsEverySection) {
  CliOutcome r = Ratelab({"list"});
  EXPECT_EQ(r.exit, kExitOk);
  for (const char* s : {"algorithms\n", "protocols\n", "backends\n", "traffic\n", "checks\n",
                        "  gcra ", "  memory-fixed-window ", "source: best practice",
                        "  boundary-attack ", "  any-window-cap "}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
}

TEST(RatelabCli, ListOneSection) {
  CliOutcome r = Ratelab({"list", "checks"});
  EXPECT_EQ(r.exit, kExitOk);
  EXPECT_EQ(r.out.find("algorithms"), std::string::npos);
  EXPECT_NE(r.out.find("bucket-conformance"), std::string::npos);
}

TEST(RatelabCli, BadInputExitsTwoAndSaysWhatIsWrong) {
  CliOutcome unknown = Ratelab({"list", "flavours"});
  EXPECT_EQ(unknown.exit, kExitBadInput);
  EXPECT_NE(unknown.err.find("flavours"), std::string::npos) << unknown.err;
  CliOutcome bad_seed = Ratelab({"demo", "--seed", "abc"});
  EXPECT_EQ(bad_seed.exit, kExitBadInput);
  EXPECT_NE(bad_seed.err.find("--seed"), std::string::npos) << bad_seed.err;
  EXPECT_EQ(Ratelab({"frobnicate"}).exit, kExitBadInput);
}

TEST(RatelabCli, SeedsMeansTheSameInEveryCommand) {
  // N is 1..N, and A..B is A..B, in check and in run alike.
  CliOutcome check = Ratelab({"check", "memory-sliding-log", "--faults", "none", "--concurrency",
                              "1", "--seeds", "5..7", "--json"});
  ASSERT_EQ(check.exit, kExitOk) << check.err;
  EXPECT_EQ(nlohmann::json::parse(check.out)["seeds_searched"], 3);
  check = Ratelab({"check", "memory-sliding-log", "--faults", "none", "--concurrency", "1",
                   "--seeds", "4", "--json"});
  EXPECT_EQ(nlohmann::json::parse(check.out)["seeds_searched"], 4);
  for (const auto& [seeds, expected] : std::vector<std::pair<std::string, std::vector<uint64_t>>>{
           {"3", {1, 2, 3}}, {"7..8", {7, 8}}}) {
    const CliOutcome run =
        Ratelab({"run", ExampleScenario("steady-poisson"), "--seeds", seeds, "--json"});
    ASSERT_EQ(run.exit, kExitOk) << run.err;
    std::vector<uint64_t> swept;
    const nlohmann::json sweep = nlohmann::json::parse(run.out);
    for (const nlohmann::json& s : sweep["seeds"]) {
      swept.push_back(s["seed"].get<uint64_t>());
    }
    EXPECT_EQ(swept, expected) << seeds;
  }
  for (const char* command : {"check", "run"}) {
    const CliOutcome help = Ratelab({command, "--help"});
    EXPECT_NE(help.out.find("N for the seeds 1..N, or a range A..B"), std::string::npos) << command;
  }
}

TEST(RatelabCli, DemoPrintsTheVerdictsAndHowToReproduce) {
  const std::string dir = ::testing::TempDir() + "/ratelab-cli-demo";
  CliOutcome r = Ratelab({"demo", "--seed", "3", "--out", dir});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find("memory-sliding-log"), std::string::npos);
  EXPECT_NE(r.out.find("reproduce: ratelab demo --seed 3"), std::string::npos);
  EXPECT_EQ(Ratelab({"demo", "--seed", "3", "--out", dir}).out, r.out) << "same seed, same bytes";
}

}  // namespace
}  // namespace ratelab
