#include "cli/ratelab_cli.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_util.h"
#include "model/check_id.h"

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
  // Every check has its line, a scenario's or not, with the commands that make the others.
  for (const CheckIdInfo& c : CheckIds()) {
    if (c.id == CheckId::kAnchoredGridCap) continue;  // a promise, not asked for by name
    EXPECT_NE(r.out.find("  " + std::string(c.name) + " "), std::string::npos) << c.name;
  }
  EXPECT_NE(r.out.find("[worst --measure]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[probe, optional: --require]"), std::string::npos) << r.out;
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

// A mistyped flag is named, with the nearest one the command has; one with no near neighbour is
// named alone; an unexpected word is named as such.
TEST(RatelabCli, AnUnknownFlagIsNamedWithTheNearestThatExists) {
  CliOutcome r = Ratelab({"compare", "--sotre", "redis", "x.yaml"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err,
            "ratelab: unknown flag --sotre for compare (did you mean --store?)\n"
            "Run 'ratelab compare --help' for usage.\n");
  r = Ratelab({"check", "kv-gcra-lua", "--fautls=none", "--zzz"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("unknown flag --fautls for check (did you mean --faults?); unknown flag "
                       "--zzz for check\n"),
            std::string::npos)
      << r.err;
  r = Ratelab({"--verison"});
  EXPECT_NE(r.err.find("unknown flag --verison (did you mean --version?)"), std::string::npos)
      << r.err;
  r = Ratelab({"compare", "a.yaml", "b.yaml"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("b.yaml"), std::string::npos) << r.err;
}

// Output that never reached its file is a failed run: a CI job must not read a missing report
// as "nothing found".
TEST(RatelabCli, OutputThatCannotBeWrittenIsAFailure) {
  const std::string err = ::testing::TempDir() + "/full-err.txt";
  for (const std::string command :
       {"list", "run " RATELAB_SOURCE_DIR "/scenarios/boundary-attack.yaml --json"}) {
    const int status =
        std::system((std::string(RATELAB_BINARY) + " " + command + " >/dev/full 2>" + err).c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    EXPECT_EQ(WEXITSTATUS(status), kExitBadInput) << command;
    std::ifstream in(err);
    const std::string said((std::istreambuf_iterator<char>(in)), {});
    EXPECT_NE(said.find("ratelab: cannot write its output to stdout"), std::string::npos) << said;
  }
}

// Each of these once grew ratelab to tens of gigabytes or aborted it: a file is refused, naming
// what is wrong and where, before any memory is spent on it.
TEST(RatelabCli, HostileFilesAreRefusedBeforeTheyAreRead) {
  const std::string dir = ::testing::TempDir() + "/hostile-files";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name, std::ios::binary) << text;
    return dir + "/" + name;
  };
  const std::string limiter = "limiters:\n  - {algorithm: gcra, burst: 1, interval: 1s}\n";
  const std::string large = write("large.yaml", "");
  std::filesystem::resize_file(large, 5 << 20);
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"run", "/dev/zero"}, "/dev/zero: the scenario file is a device, not a regular file"},
      {{"run", large},
       "large.yaml: the scenario file is larger than 4 MiB, the most ratelab reads"},
      {{"run", write("latin1.yaml", "name: caf\xe9\n" + limiter)},
       "latin1.yaml:1:10: the scenario file is not UTF-8 text"},
      {{"run", write("replay.yaml", limiter + "traffic:\n  - {type: replay, file: /dev/zero}\n")},
       "/dev/zero: the access log is a device, not a regular file"},
      {{"run", write("deep.yaml", "a: " + std::string(100'000, '[') + "\n")}, "levels deep"},
      {{"check", "--lua-spec", write("spec.yaml", "script: /dev/zero\nmodel: gcra\n")},
       "/dev/zero: the Lua script is a device, not a regular file"},
      {{"report", "/dev/zero", "--out", dir + "/out"},
       "/dev/zero: the report is a device, not a regular file"},
      {{"run", write("name.yaml", "name: \"two\\nlines\"\n" + limiter)},
       "name.yaml:1:7: 'name' may not hold a line break"},
  };
  for (const auto& [args, message] : cases) {
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << args[1];
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// One flag, one meaning: the old spellings of renamed flags still work, with a note.
TEST(RatelabCli, RenamedFlagsStillWorkWithANote) {
  const CliOutcome check = Ratelab(
      {"check", "memory-sliding-log", "--faults", "none", "--concurrency", "1", "--seeds", "2"});
  EXPECT_EQ(check.exit, kExitOk) << check.err;
  EXPECT_NE(check.err.find("note: check --concurrency is now --nodes"), std::string::npos)
      << check.err;
  const CliOutcome worst = Ratelab({"worst", "memory-fixed-window", "--concurrency", "1", "--runs",
                                    "50", "--claim=most-in-window", "--time", "1m"});
  EXPECT_EQ(worst.exit, kExitOk) << worst.err;
  EXPECT_NE(worst.err.find("note: worst --claim is now --measure"), std::string::npos);
  EXPECT_NE(worst.err.find("note: worst --time is now --duration"), std::string::npos);
  EXPECT_NE(worst.out.find("--measure most-in-window"), std::string::npos) << worst.out;
  // The new spellings, and no note.
  const CliOutcome now =
      Ratelab({"check", "memory-sliding-log", "--faults", "none", "--nodes", "1", "--seeds", "2"});
  EXPECT_EQ(now.exit, kExitOk) << now.err;
  EXPECT_EQ(now.err.find("note:"), std::string::npos) << now.err;
  // probe's help names --connections, not --concurrency.
  const CliOutcome help = Ratelab({"probe", "--help"});
  EXPECT_NE(help.out.find("--connections"), std::string::npos);
  EXPECT_EQ(help.out.find("--concurrency"), std::string::npos);
}

TEST(RatelabCli, SeedsMeansTheSameInEveryCommand) {
  // N is 1..N, and A..B is A..B, in check and in run alike.
  CliOutcome check = Ratelab({"check", "memory-sliding-log", "--faults", "none", "--nodes", "1",
                              "--seeds", "5..7", "--json"});
  ASSERT_EQ(check.exit, kExitOk) << check.err;
  EXPECT_EQ(nlohmann::json::parse(check.out)["seeds_searched"], 3);
  check = Ratelab({"check", "memory-sliding-log", "--faults", "none", "--nodes", "1", "--seeds",
                   "4", "--json"});
  EXPECT_EQ(nlohmann::json::parse(check.out)["seeds_searched"], 4);
  for (const auto& [seeds, expected] : std::vector<std::pair<std::string, std::vector<uint64_t>>>{
           {"3", {1, 2, 3}}, {"7..8", {7, 8}}}) {
    const CliOutcome run =
        Ratelab({"run", ExampleScenario("steady-poisson"), "--seeds", seeds, "--json"});
    ASSERT_EQ(run.exit, kExitViolation) << run.err;  // its buckets admit past the claim
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
