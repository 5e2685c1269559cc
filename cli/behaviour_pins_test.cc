// Behaviour pins: what ratelab prints and writes for fixed seeds, as golden files in cli/golden/
// (testing/golden.h). The same seeds must give the same histories, verdicts, witnesses and
// report bytes after any refactoring; a change in behaviour changes these files on purpose, in
// its own commit, saying why, and its diff is what the reviewer reads. RATELAB_UPDATE_GOLDEN=1
// rewrites them from what the build now does.
//
// The JSON files hold the meaning: each run's and check's verdicts, history hashes and
// witnesses, as data. The text, Markdown, JUnit and HTML files hold the presentation, so that a
// change of wording moves only those. The HTML is kept without its plots' SVG (gnuplot's
// drawing of the plots' scripts and data, which are golden files of their own): each <svg>
// element is one line naming its size and hash.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/golden.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

// Replaces every `from` in `text` with `to`.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// `html` with each <svg>...</svg> element one line: its size and FNV-1a hash.
std::string WithoutSvg(const std::string& html) {
  std::string out;
  size_t from = 0;
  for (size_t at = html.find("<svg", from); at != std::string::npos; at = html.find("<svg", from)) {
    const size_t end = html.find("</svg>", at);
    if (end == std::string::npos) break;
    const std::string_view svg(html.data() + at, end + 6 - at);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char c : svg) h = (h ^ c) * 0x100000001b3ULL;
    char line[96];
    std::snprintf(line, sizeof line, "<svg: %zu bytes, fnv1a %016" PRIx64 ">", svg.size(), h);
    out.append(html, from, at - from).append(line);
    from = end + 6;
  }
  return out.append(html, from, std::string::npos);
}

// Expects `bytes` to be cli/golden/`path`.
void ExpectGolden(const std::string& what, const std::string& path, const std::string& bytes) {
  testing_golden::ExpectGolden(RATELAB_SOURCE_DIR "/cli/golden", path, bytes, what);
}

struct CommandPin {
  std::vector<std::string> args;  // {scenarios} stands for scenarios/ in the source tree
  int exit;
  std::string golden;  // its stdout's file in cli/golden/
};

std::vector<std::string> Expand(std::vector<std::string> args) {
  for (std::string& a : args) a = Replace(a, "{scenarios}", RATELAB_SOURCE_DIR "/scenarios");
  return args;
}

std::string Joined(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) out += (out.empty() ? "" : " ") + a;
  return out;
}

void ExpectCommandPins(const std::vector<CommandPin>& pins) {
  for (const CommandPin& pin : pins) {
    const CliOutcome r = Ratelab(Expand(pin.args));
    const std::string what = Joined(pin.args);
    EXPECT_EQ(r.exit, pin.exit) << what << "\n" << r.err;
    ExpectGolden(what, pin.golden, Replace(r.out, RATELAB_SOURCE_DIR, "SRC"));
  }
}

// Each command of `pins` again with --json: its stdout in the golden file named as the pin's,
// with .json for .txt.
std::vector<CommandPin> AsJson(std::vector<CommandPin> pins) {
  for (CommandPin& pin : pins) {
    pin.args.push_back("--json");
    pin.golden = pin.golden.substr(0, pin.golden.rfind('.')) + ".json";
  }
  return pins;
}

TEST(BehaviourPins, RunPrintsTheSameHistoriesVerdictsAndWitnesses) {
  ExpectCommandPins({
      {{"run", "{scenarios}/access-log-replay.yaml", "--seed", "1"},
       1,
       "run/access-log-replay.seed-1.txt"},
      {{"run", "{scenarios}/boundary-attack.yaml", "--seed", "1"},
       1,
       "run/boundary-attack.seed-1.txt"},
      {{"run", "{scenarios}/bursty-many-users.yaml", "--seed", "2"},
       1,
       "run/bursty-many-users.seed-2.txt"},
      {{"run", "{scenarios}/clock-skew.yaml", "--seed", "3"}, 1, "run/clock-skew.seed-3.txt"},
      {{"run", "{scenarios}/restart-mid-window.yaml", "--seed", "1"},
       1,
       "run/restart-mid-window.seed-1.txt"},
      {{"run", "{scenarios}/steady-poisson.yaml", "--seed", "2"},
       1,
       "run/steady-poisson.seed-2.txt"},
      {{"run", "{scenarios}/store-outage.yaml", "--seed", "3"}, 1, "run/store-outage.seed-3.txt"},
      {{"run", "{scenarios}/store-restart.yaml", "--seed", "1"}, 1, "run/store-restart.seed-1.txt"},
  });
}

TEST(BehaviourPins, RunJsonHasTheSameNumbers) {
  ExpectCommandPins({
      {{"run", "{scenarios}/access-log-replay.yaml", "--json"}, 1, "run/access-log-replay.json"},
      {{"run", "{scenarios}/rule-change.yaml", "--json"}, 0, "run/rule-change.json"},
      {{"run", "{scenarios}/clock-skew.yaml", "--json"}, 1, "run/clock-skew.json"},
      {{"run", "{scenarios}/store-restart.yaml", "--json"}, 1, "run/store-restart.json"},
      {{"run", "{scenarios}/clock-skew.yaml", "--seeds", "1..12", "--json"},
       1,
       "run/clock-skew.seeds-1-12.json"},
      {{"run", "{scenarios}/store-outage.yaml", "--seeds", "4..9"},
       1,
       "run/store-outage.seeds-4-9.txt"},
  });
}

// Each a seed's flaw (or, the last, a correct protocol): the minimal witness check shrinks it
// to, as text and as JSON.
const std::vector<CommandPin> kCheckPins = {
    {{"check", "kv-token-bucket-hgetall-hset", "--burst", "1", "--seeds", "20"},
     1,
     "check/kv-token-bucket-hgetall-hset.txt"},
    {{"check", "kv-fixed-window-incr-pexpire", "--faults", "crash", "--seeds", "200"},
     1,
     "check/kv-fixed-window-incr-pexpire.txt"},
    {{"check", "kv-sliding-log-zset", "--seeds", "20"}, 1, "check/kv-sliding-log-zset.txt"},
    {{"check", "kv-sliding-counter", "--seeds", "20"}, 1, "check/kv-sliding-counter.txt"},
    {{"check", "kv-fixed-window-lua", "--claim", "--faults", "none", "--seeds", "50"},
     1,
     "check/kv-fixed-window-lua.claim.txt"},
    {{"check", "docs-fixed-window-upsert", "--limit", "1", "--faults", "none"},
     1,
     "check/docs-fixed-window-upsert.txt"},
    {{"check", "docs-fixed-window-unique", "--checks", "promise", "--faults", "clock-skew"},
     1,
     "check/docs-fixed-window-unique.txt"},
    {{"check", "docs-check-then-consume", "--limit", "1", "--checks", "promise"},
     1,
     "check/docs-check-then-consume.txt"},
    {{"check", "memory-gcra", "--checks", "survives-restart", "--nodes", "1", "--faults", "crash"},
     1,
     "check/memory-gcra.txt"},
    {{"check", "docs-fixed-window-retry", "--limit", "1", "--checks", "survives-restart",
      "--durability", "none", "--faults", "store-restart"},
     1,
     "check/docs-fixed-window-retry.txt"},
    {{"check", "kv-token-bucket-lua", "--burst", "2", "--rate", "100", "--faults", "none",
      "--seeds", "2000"},
     1,
     "check/kv-token-bucket-lua.txt"},
    {{"check", "kv-gcra-lua", "--seeds", "60", "--faults",
      "crash,store-restart,store-outage,clock-skew"},
     1,
     "check/kv-gcra-lua.txt"},
    {{"check", "kv-sliding-log-lua", "--limit", "3", "--window", "1m", "--seeds", "40"},
     0,
     "check/kv-sliding-log-lua.txt"},
};

TEST(BehaviourPins, CheckFindsTheSameMinimalWitnesses) { ExpectCommandPins(kCheckPins); }

TEST(BehaviourPins, CheckJsonHasTheSameWitnesses) { ExpectCommandPins(AsJson(kCheckPins)); }

TEST(BehaviourPins, CheckJudgesAUserScriptTheSameWay) {
  const fs::path dir = testing_files::TempDir("lua");
  const fs::path bad = testing_files::Write(dir, "off_by_one.lua", FixedWindowScript(">"));
  const fs::path good = testing_files::Write(dir, "fixed_window.lua", FixedWindowScript(">="));
  for (const auto& [file, exit] : std::vector<std::pair<fs::path, int>>{{bad, 1}, {good, 0}}) {
    const CliOutcome r = Ratelab({"check", "--lua", file.string(), "--model", "fixed-window",
                                  "--args", "{limit},{window_ms},{now_ms}", "--reply",
                                  "allowed,remaining", "--limit", "1", "--seeds", "40"});
    EXPECT_EQ(r.exit, exit) << r.err;
    ExpectGolden("check --lua " + file.filename().string(),
                 "check/lua-" + file.stem().string() + ".txt", Replace(r.out, dir.string(), "DIR"));
  }
}

// The files of a report directory `dir`, each the golden file of the same name in `golden`
// (the HTML without its SVG).
void ExpectFilesGolden(const std::string& what, const fs::path& dir, const std::string& golden,
                       const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    // The files name the report's directory (the plots' scripts) and the scenario's path (the
    // reproduce line): both depend on where the test runs, not on what ratelab did.
    std::string bytes = Replace(Replace(testing_files::Read(dir / name), dir.string(), "DIR"),
                                RATELAB_SOURCE_DIR, "SRC");
    if (name.ends_with(".html")) bytes = WithoutSvg(bytes);
    ExpectGolden(what + " " + name, golden + "/" + name, bytes);
  }
}

// stdout up to the line that names the report's (temp) directory.
std::string BeforeReportPath(const std::string& out) {
  return out.substr(0, out.find("\nreport: "));
}

const std::vector<std::string> kReportFiles = {"report.json", "report.md", "junit.xml",
                                               "report.html"};
const std::vector<std::string> kPlotFiles = {"plots/traffic.gp", "plots/window.gp",
                                             "plots/latency.gp", "plots/traffic.dat",
                                             "plots/window.dat", "plots/latency.dat"};

TEST(BehaviourPins, CompareWritesTheSameReport) {
  const fs::path dir = testing_files::TempDir("compare");
  const CliOutcome r = Ratelab({"compare", RATELAB_SOURCE_DIR "/scenarios/store-outage.yaml",
                                "--seed", "2", "--out", dir.string()});
  ASSERT_EQ(r.exit, 0) << r.err;
  ExpectGolden("compare stdout", "compare-store-outage/stdout.txt",
               Replace(BeforeReportPath(r.out), RATELAB_SOURCE_DIR, "SRC"));
  ExpectFilesGolden("compare", dir, "compare-store-outage", kReportFiles);
  ExpectFilesGolden("compare", dir, "compare-store-outage", kPlotFiles);

  // Rebuilt from its report.json, the views are the same bytes.
  const fs::path again = testing_files::TempDir("report");
  const CliOutcome rebuilt =
      Ratelab({"report", (dir / "report.json").string(), "--out", again.string()});
  ASSERT_EQ(rebuilt.exit, 0) << rebuilt.err;
  ExpectFilesGolden("report", again, "compare-store-outage", kReportFiles);
  ExpectFilesGolden("report", again, "compare-store-outage", kPlotFiles);
}

TEST(BehaviourPins, DemoWritesTheSameReport) {
  const fs::path dir = testing_files::TempDir("demo");
  const CliOutcome r = Ratelab({"demo", "--seed", "3", "--out", dir.string()});
  ASSERT_EQ(r.exit, 0) << r.err;
  ExpectGolden("demo stdout", "demo/stdout.txt", BeforeReportPath(r.out));
  ExpectFilesGolden("demo", dir, "demo", kReportFiles);
}

TEST(BehaviourPins, ASweepsFirstFailingSeedRebuildsTheSameReport) {
  const fs::path dir = testing_files::TempDir("sweep");
  const CliOutcome r = Ratelab({"run", RATELAB_SOURCE_DIR "/scenarios/restart-mid-window.yaml",
                                "--seeds", "1..5", "--out", dir.string()});
  ASSERT_EQ(r.exit, 1) << r.err;
  ExpectFilesGolden("sweep", dir, "sweep-restart-mid-window", {"result.json"});
  const fs::path views = testing_files::TempDir("views");
  ASSERT_EQ(Ratelab({"report", (dir / "result.json").string(), "--out", views.string()}).exit, 0);
  ExpectFilesGolden("sweep report", views, "sweep-restart-mid-window",
                    {"report.md", "junit.xml", "report.html"});
}

}  // namespace
}  // namespace ratelab
