#include "cli/report_commands.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_util.h"
#include "cli/ratelab_cli.h"
#include "reports/output_dir.h"
#include "reports/report_model.h"
#include "reports/stress_report.h"
#include "testing/files.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
using testing_files::Read;
using testing_files::TempDir;

void ExpectAllFiles(const fs::path& dir) {
  for (const char* f : {"report.html", "report.md", "report.json", "junit.xml", "plots/traffic.svg",
                        "plots/window.svg"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << dir / f;
  }
}

TEST(Compare, WritesEveryViewForEveryExampleScenario) {
  for (const char* name :
       {"boundary-attack", "steady-poisson", "bursty-many-users", "restart-mid-window",
        "clock-skew", "store-outage", "store-restart", "access-log-replay"}) {
    const fs::path dir = TempDir(std::string("compare-") + name);
    CliOutcome r = Ratelab({"compare", ExampleScenario(name), "--out", dir.string()});
    EXPECT_EQ(r.exit, kExitOk) << name << "\n" << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("report: " + (dir / "report.html").string()), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("simulating 1/"), std::string::npos) << "no progress shown";
    ExpectAllFiles(dir);
    const nlohmann::json j = nlohmann::json::parse(Read(dir / "report.json"));
    EXPECT_EQ(j["reproduce"], "ratelab compare " + ExampleScenario(name) + " --seed 1");
  }
}

TEST(Compare, OverSeedsReportsEachLimitersMedianAndWorstAndRebuildsFromItsJson) {
  const fs::path dir = TempDir("compare-seeds"), again = TempDir("compare-seeds-again");
  const std::string scenario = ExampleScenario("boundary-attack");
  CliOutcome r =
      Ratelab({"compare", scenario, "--seeds", "2..4", "--strict", "--out", dir.string()});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.err.find("progress: 3/3 seeds"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("memory-fixed-window     broke the claim in 3 of 3 seeds"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(Read(dir / "report.json"));
  EXPECT_EQ(j["seed"], 2);
  EXPECT_EQ(j["reproduce"], "ratelab compare " + scenario + " --seed 2");
  EXPECT_EQ(j["across_seeds"]["first"], 2);
  EXPECT_EQ(j["across_seeds"]["count"], 3);
  EXPECT_NE(Read(dir / "report.html").find("<h2 id=\"seeds\">Across seeds</h2>"),
            std::string::npos);
  ASSERT_EQ(Ratelab({"report", (dir / "report.json").string(), "--out", again.string()}).exit,
            kExitOk);
  for (const char* f : {"report.html", "report.md", "report.json", "junit.xml"}) {
    EXPECT_EQ(Read(dir / f), Read(again / f)) << f;
  }

  CliOutcome both = Ratelab({"compare", scenario, "--seed", "1", "--seeds", "3", "--out",
                             TempDir("compare-both").string()});
  EXPECT_EQ(both.exit, kExitBadInput);
  EXPECT_NE(both.err.find("--seed excludes --seeds"), std::string::npos) << both.err;
}

TEST(Compare, AReplayedLogsWitnessesAndPlotsKeepItsDatesAndItsZone) {
  // scenarios/logs/sample-access.log was written in +01:00: its first request at 09:00:00.
  const fs::path dir = TempDir("compare-zone");
  ASSERT_EQ(Ratelab({"compare", ExampleScenario("access-log-replay"), "--out", dir.string()}).exit,
            kExitOk);
  const std::string html = Read(dir / "report.html");
  EXPECT_NE(html.find("<th>sent (2026-03-14 UTC+01:00)</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>09:01:06.000</td>"), std::string::npos);
  // The violation's summary is in UTC, and says so.
  EXPECT_NE(html.find("[2026-03-14 08:01:06.000, 2026-03-14 08:01:10.000] (span 4s &lt; 10s), "
                      "limit 10 per 10s (times in UTC)"),
            std::string::npos);
  EXPECT_NE(Read(dir / "plots/window.gp").find("set xlabel 'UTC+01:00, from 2026-03-14'"),
            std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(Read(dir / "report.json"));
  EXPECT_EQ(j["utc_offset"], "+01:00");
  EXPECT_EQ(j["start"], "2026-03-13T23:00:00Z");  // midnight in the log's zone
}

// demo --json, as compare --json: stdout holds report.json alone, where it went is on stderr.
TEST(Demo, JsonPrintsReportJsonAloneAndSaysWhereTheReportWentOnStderr) {
  const fs::path dir = testing_files::TempDir("demo-json");
  const CliOutcome r = Ratelab({"demo", "--seed", "3", "--json", "--out", dir.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "violation");
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(r.out, testing_files::Read(dir / "report.json"));
  EXPECT_NE(r.err.find("report: "), std::string::npos) << r.err;
}

TEST(Report, RebuildsTheSameViewsFromReportJson) {
  const fs::path first = TempDir("first"), again = TempDir("again");
  ASSERT_EQ(Ratelab({"compare", ExampleScenario("store-outage"), "--out", first.string()}).exit,
            kExitOk);
  CliOutcome r = Ratelab({"report", (first / "report.json").string(), "--out", again.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  for (const char* f : {"report.html", "report.md", "report.json", "junit.xml"}) {
    EXPECT_EQ(Read(first / f), Read(again / f)) << f;
  }
}

TEST(Report, RebuildsFromRunResultsAndFromASweepsFirstFailingSeed) {
  const fs::path run = TempDir("run"), from_run = TempDir("from-run");
  Ratelab({"run", ExampleScenario("boundary-attack"), "--out", run.string()});
  CliOutcome r = Ratelab({"report", (run / "result.json").string(), "--out", from_run.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  ExpectAllFiles(from_run);
  EXPECT_NE(Read(from_run / "report.md").find("ratelab run "), std::string::npos);

  const fs::path sweep = TempDir("sweep"), from_sweep = TempDir("from-sweep");
  Ratelab({"run", ExampleScenario("clock-skew"), "--seeds", "1..3", "--out", sweep.string()});
  r = Ratelab({"report", (sweep / "result.json").string(), "--out", from_sweep.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  ExpectAllFiles(from_sweep);

  const fs::path calm = TempDir("calm"), from_calm = TempDir("from-calm");
  Ratelab({"run", ExampleScenario("rule-change"), "--seeds", "1..2", "--out", calm.string()});
  r = Ratelab({"report", (calm / "result.json").string(), "--out", from_calm.string()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("no seed failed"), std::string::npos) << r.err;
}

// A stress run's JSON (stress needs a server, so one made here) is read back and its views
// rebuilt: the text stress prints, and its JUnit cases, each failed with its violation.
TEST(Report, RebuildsAStressRunsViewsFromItsJson) {
  StressReport s;
  s.protocol = "kv-token-bucket-hgetall-hset";
  s.store = "redis://127.0.0.1:6379";
  s.policy = "token-bucket burst 10, one per 10ms";
  s.threads = 8;
  s.duration_s = 1;
  s.answered = s.denied = 100;
  s.busiest_key = {"user:u1:/api", 12, 11};
  s.promise = CheckId::kBucketConformance;
  for (const auto& [check, invariant] :
       {std::pair{CheckId::kPromise, CheckId::kBucketConformance},
        std::pair{CheckId::kLinearizable, CheckId::kLinearizable}}) {
    s.violations.push_back(
        {check, invariant, "user:u1:/api", std::string(CheckName(check)) + " broken", {}});
  }
  s.linearizability = StressLinearizability{LinearVerdict::kNotLinearizable, 100, 1, 10, 0, ""};
  const fs::path dir = TempDir("stress-report");
  fs::create_directories(dir);
  std::ofstream(dir / "stress.json") << JsonText(ToJson(s));
  const CliOutcome r =
      Ratelab({"report", (dir / "stress.json").string(), "--out", (dir / "views").string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find("ratelab report: stress of kv-token-bucket-hgetall-hset"), std::string::npos)
      << r.out;
  EXPECT_EQ(nlohmann::json::parse(Read(dir / "views" / "report.json")), ToJson(s));
  EXPECT_NE(Read(dir / "views" / "report.md").find(RenderStressText(s)), std::string::npos);
  EXPECT_EQ(Read(dir / "views" / "junit.xml"), RenderStressJunit(s));
  EXPECT_NE(RenderStressJunit(s).find(R"(tests="2" failures="2")"), std::string::npos)
      << RenderStressJunit(s);
}

TEST(Report, BadFilesExitTwoSayingWhatIsWrong) {
  const fs::path dir = TempDir("bad");
  fs::create_directories(dir);
  const auto write = [&](const char* name, const char* text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string out = (dir / "out").string();
  CliOutcome r = Ratelab({"report", (dir / "missing.json").string(), "--out", out});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("missing.json: cannot open the report"), std::string::npos) << r.err;

  r = Ratelab({"report", write("broken.json", "{\"limiters\": [1,"), "--out", out});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("not JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("broken.json"), std::string::npos) << r.err;

  r = Ratelab({"report", write("other.json", "{\"name\": \"x\"}"), "--out", out});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("is not a ratelab report"), std::string::npos) << r.err;

  r = Ratelab({"report", write("wrong.json", "{\"limiters\": 3, \"bins\": {}}"), "--out", out});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("not a ratelab report"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "report.html"));
}

TEST(Compare, AnOutputDirectoryThatCannotBeMadeExitsTwo) {
  const fs::path dir = TempDir("blocked");
  fs::create_directories(dir);
  std::ofstream(dir / "file") << "x";
  CliOutcome r = Ratelab(
      {"compare", ExampleScenario("boundary-attack"), "--out", (dir / "file" / "sub").string()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("cannot create"), std::string::npos) << r.err;
}

TEST(Demo, WritesItsReportWhereAsked) {
  const fs::path dir = TempDir("demo");
  CliOutcome r = Ratelab({"demo", "--out", dir.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  ExpectAllFiles(dir);
  EXPECT_NE(r.out.find("report: " + (dir / "report.html").string()), std::string::npos);
  // The any-window invariant fails for the fixed window in the JUnit file.
  const std::string junit = Read(dir / "junit.xml");
  const size_t fixed = junit.find("classname=\"demo.memory-fixed-window\" name=\"any-window-cap\"");
  ASSERT_NE(fixed, std::string::npos);
  EXPECT_LT(junit.find("<failure", fixed), junit.find("</testcase>", fixed));
}

TEST(Demo, ComparesOverTwentySeedsAndPicksOnlyWhatHeldInEach) {
  const fs::path dir = TempDir("demo-seeds");
  CliOutcome r = Ratelab({"demo", "--out", dir.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find("ratelab demo, seeds 1..20 (seed 1 in full)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("broke the claim in 20 of 20 seeds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduce: ratelab demo --seed 1"), std::string::npos) << r.out;
  const std::string md = Read(dir / "report.md");
  EXPECT_NE(md.find("at least 5% ahead of the next in every one of the 20 seeds"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("To keep the claim exactly: **memory-sliding-log**"), std::string::npos);
  EXPECT_NE(md.find("To keep the least state: **memory-gcra** (8 bytes of state per key; ahead "
                    "in every one of the 20 seeds"),
            std::string::npos)
      << md;
  // One seed, as before: the lead of that run, said to be one seed's.
  r = Ratelab({"demo", "--seed", "1", "--out", dir.string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(Read(dir / "report.md").find("which is one seed's traffic"), std::string::npos);
  EXPECT_EQ(Ratelab({"demo", "--seed", "1", "--seeds", "3"}).exit, kExitBadInput);
}

TEST(Demo, NeverWritesIntoTheRootOrOverOthersFiles) {
  // Refused before any work, with nothing written.
  CliOutcome r = Ratelab({"demo", "--out", "/"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--out: '/' is the root directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("simulating"), std::string::npos) << "refused before simulating";
  EXPECT_FALSE(fs::exists("/report.html"));

  const fs::path dir = TempDir("demo-others");
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "mine";
  r = Ratelab({"compare", ExampleScenario("boundary-attack"), "--out", dir.string()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("ratelab did not write (such as notes.txt)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "report.html"));
  r = Ratelab({"demo", "--out", dir.string(), "--force"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  ExpectAllFiles(dir);
  EXPECT_EQ(Read(dir / "notes.txt"), "mine") << "kept beside the report";
  // Its own report it rewrites, leaving no stale plot beside the new ones.
  std::ofstream(dir / "plots" / "stale.svg") << "<svg/>";
  std::ofstream(dir / kManifestName, std::ios::app) << "plots/stale.svg\n";
  r = Ratelab({"demo", "--out", dir.string(), "--force"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_FALSE(fs::exists(dir / "plots" / "stale.svg"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
}

}  // namespace
}  // namespace ratelab
