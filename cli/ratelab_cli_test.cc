#include "cli/ratelab_cli.h"

#include <gtest/gtest.h>

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
