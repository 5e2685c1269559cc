// Behaviour pins: the bytes ratelab printed and wrote before the architecture step (issue 14),
// hashed. Every pin changed when the violation summaries lost their nanosecond noise (times to
// the millisecond, "denied at 00:01:10.368"; spans too, "span 58.908s") and the JUnit and check
// witnesses came to share one text layout (offsets from the first row, to the microsecond under a
// second and the millisecond above, as the HTML's): the same histories and verdicts, written more
// shortly. The same seeds must give the same history hashes, verdicts,
// witnesses and report bytes after any refactoring; a change in behaviour must change these pins on
// purpose, in its own commit, saying why.
//
// Every pin of a simulated run changed on purpose with issue 21's smaller witnesses: each request
// draws its node and its steps' latencies from a random stream of its own (Arrival::stream), no
// longer from its node's stream in turn, so a request taken away by the shrink leaves the others'
// draws as they were. The same traffic and faults, other interleavings: seed 003's short TTL
// (kv-token-bucket-lua at rate 100) is now first found at seed 1116, not within 100.
//
// Each pin is an FNV-1a hash of a command's standard output (or of a file it wrote). On a
// mismatch the test writes what it got to the temp dir and names the file, so the difference
// can be read with diff against the output of the previous binary.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/files.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

uint64_t Fnv(const std::string& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string Hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

// Replaces every `from` in `text` with `to`.
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Expects `bytes` to hash to `pinned`; keeps what it got for reading when not.
void ExpectPinned(const std::string& what, const std::string& bytes, const std::string& pinned) {
  const std::string got = Hex(Fnv(bytes));
  if (got == pinned) return;
  std::string name = what;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  const fs::path kept = fs::path(::testing::TempDir()) / ("ratelab-pin-" + name.substr(0, 120));
  testing_files::Write(kept.parent_path(), kept.filename().string(), bytes);
  ADD_FAILURE() << what << ": hash " << got << ", pinned " << pinned << "; output kept in "
                << kept.string();
}

struct CommandPin {
  std::vector<std::string> args;  // {scenario} stands for scenarios/ in the source tree
  int exit;
  std::string stdout_hash;
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
    ExpectPinned(what, Replace(r.out, RATELAB_SOURCE_DIR, "SRC"), pin.stdout_hash);
  }
}

// access-log-replay's pins changed when a scenario that opens with a log came to start on the
// log's day (2026-03-14, not 2026-01-01): the same times of day, verdicts and witnesses.
// clock-skew's JSON changed when its description came to name its source document by what it is.
TEST(BehaviourPins, RunPrintsTheSameHistoriesVerdictsAndWitnesses) {
  ExpectCommandPins({
      {{"run", "{scenarios}/access-log-replay.yaml", "--seed", "1"}, 1, "484be4923a294b0a"},
      {{"run", "{scenarios}/boundary-attack.yaml", "--seed", "1"}, 1, "6279982137a5aa53"},
      {{"run", "{scenarios}/bursty-many-users.yaml", "--seed", "2"}, 0, "665da6f4af6bb13c"},
      {{"run", "{scenarios}/clock-skew.yaml", "--seed", "3"}, 1, "7d80f43bebd7f018"},
      {{"run", "{scenarios}/restart-mid-window.yaml", "--seed", "1"}, 1, "17ac2129adab8ec3"},
      {{"run", "{scenarios}/steady-poisson.yaml", "--seed", "2"}, 0, "bdc73a84517cdd54"},
      {{"run", "{scenarios}/store-outage.yaml", "--seed", "3"}, 1, "eeae218c248df244"},
      {{"run", "{scenarios}/store-restart.yaml", "--seed", "1"}, 1, "65634a82e782b2c0"},
  });
}

// The JSON pins (here and of the report files below) changed when each limiter's report gained
// its "algorithm" and the run its "start": with those fields taken out, every file hashed as
// pinned before. The HTML and Markdown pins changed when the reports gained their
// recommendation, and the HTML again with short witnesses. The JSON's series and the plot
// scripts changed when the time bins came to fit the requests (and the peak series to hold its
// value between admissions), and the scripts to draw on the scenario's clock. The Markdown
// changed again to put the verdicts first in six columns and collapse the rest; junit.xml when
// its failures came to carry the command that reproduces them (and times three decimals). The
// access-log replay's changed when its scenario came to start at midnight of the log's day in the
// log's own zone (+01:00), an hour earlier, and the report to carry that zone ("utc_offset"):
// every "_s" field one hour later, every decision the same (its text pin above, with the history
// hash, held).
// The sweep's pin here and ASweepsFirstFailingSeedRebuildsTheSameReport's result.json changed on
// purpose (issue 21): a sweep's JSON carries the command that runs one of its seeds again
// ("reproduce", with {seed}), so that `merge` can name each failing seed's command.
TEST(BehaviourPins, RunJsonHasTheSameNumbers) {
  ExpectCommandPins({
      {{"run", "{scenarios}/access-log-replay.yaml", "--json"}, 1, "894d9bf3b6ae9f95"},
      {{"run", "{scenarios}/bursty-many-users.yaml", "--json"}, 0, "3ad2571132638fc4"},
      {{"run", "{scenarios}/clock-skew.yaml", "--json"}, 1, "fe88036f4e618bb5"},
      {{"run", "{scenarios}/store-restart.yaml", "--json"}, 1, "1d467fca0d326a24"},
      {{"run", "{scenarios}/clock-skew.yaml", "--seeds", "1..12", "--json"}, 1, "4dc8854c7f547c59"},
      {{"run", "{scenarios}/store-outage.yaml", "--seeds", "4..9"}, 1, "5abd7d4ee09b0c09"},
  });
}

// Four of these changed on purpose after the architecture step (issue 15): the shrink no longer
// lowers the limit unless asked (--shrink-policy), so those minimal cases keep the policy the
// check was given (fixed-window 2 per 10s, not 1 per 10s).
TEST(BehaviourPins, CheckFindsTheSameMinimalWitnesses) {
  ExpectCommandPins({
      {{"check", "kv-token-bucket-hgetall-hset", "--burst", "1", "--seeds", "20"},
       1,
       "ed0a97fb52e806cb"},
      {{"check", "kv-fixed-window-incr-pexpire", "--faults", "crash", "--seeds", "200"},
       1,
       "ccc5a3fe8a12b9b4"},
      {{"check", "kv-sliding-log-zset", "--seeds", "20"}, 1, "95b237744b69182b"},
      {{"check", "kv-sliding-counter", "--seeds", "20"}, 1, "cdd0b6cafcfef4cf"},
      {{"check", "kv-fixed-window-lua", "--claim", "--faults", "none", "--seeds", "50"},
       1,
       "56a01837204e1f34"},
      {{"check", "docs-fixed-window-upsert", "--limit", "1", "--faults", "none"},
       1,
       "d1be40cc9433f4bf"},
      {{"check", "docs-fixed-window-unique", "--checks", "promise", "--faults", "skew"},
       1,
       "4c17d9ef2afb399e"},
      {{"check", "docs-check-then-consume", "--limit", "1", "--checks", "promise"},
       1,
       "8f35bb3f2958e098"},
      {{"check", "memory-gcra", "--checks", "survives-restart", "--concurrency", "1", "--faults",
        "crash"},
       1,
       "93306cb5c071aa90"},
      {{"check", "docs-fixed-window-retry", "--limit", "1", "--checks", "survives-restart",
        "--durability", "none", "--faults", "restart"},
       1,
       "51faa46a8b889edb"},
      {{"check", "kv-token-bucket-lua", "--burst", "2", "--rate", "100", "--faults", "none",
        "--seeds", "2000"},
       1,
       "d6d62147d45d4413"},
      {{"check", "kv-gcra-lua", "--seeds", "60", "--faults", "crash,restart,outage,skew"},
       1,
       "e356c9e64bda9c9a"},
      {{"check", "kv-sliding-log-lua", "--limit", "3", "--window", "1m", "--seeds", "40"},
       0,
       "44309fbb107218a6"},
  });
}

TEST(BehaviourPins, CheckJudgesAUserScriptTheSameWay) {
  const fs::path dir = testing_files::TempDir("lua");
  const fs::path bad = testing_files::Write(dir, "off_by_one.lua", FixedWindowScript(">"));
  const fs::path good = testing_files::Write(dir, "fixed_window.lua", FixedWindowScript(">="));
  for (const auto& [file, exit, pinned] : std::vector<std::tuple<fs::path, int, std::string>>{
           {bad, 1, "f6c9be1cc175b1cd"}, {good, 0, "7aae64e8bbcc0538"}}) {
    const CliOutcome r = Ratelab({"check", "--lua", file.string(), "--model", "fixed-window",
                                  "--args", "{limit},{window_ms},{now_ms}", "--reply",
                                  "allowed,remaining", "--limit", "1", "--seeds", "40"});
    EXPECT_EQ(r.exit, exit) << r.err;
    ExpectPinned("check --lua " + file.filename().string(), Replace(r.out, dir.string(), "DIR"),
                 pinned);
  }
}

// A report directory's files, each pinned; plots too (gnuplot's SVG is part of the HTML).
struct FilePin {
  std::string name;
  std::string hash;
};

void ExpectFilesPinned(const std::string& what, const fs::path& dir,
                       const std::vector<FilePin>& pins) {
  for (const FilePin& pin : pins) {
    // The files name the report's directory (the plots' scripts) and the scenario's path (the
    // reproduce line): both depend on where the test runs, not on what ratelab did.
    const std::string bytes =
        Replace(Replace(testing_files::Read(dir / pin.name), dir.string(), "DIR"),
                RATELAB_SOURCE_DIR, "SRC");
    ExpectPinned(what + " " + pin.name, bytes, pin.hash);
  }
}

// stdout up to the line that names the report's (temp) directory.
std::string BeforeReportPath(const std::string& out) {
  return out.substr(0, out.find("\nreport: "));
}

const std::vector<FilePin> kStoreOutageReport = {
    {"report.json", "0388b592a1ee7e30"},      {"report.md", "f0ae9e8ea18d5549"},
    {"junit.xml", "a0c2d3c7f488269d"},        {"report.html", "731c1d16f25e522a"},
    {"plots/traffic.gp", "74e7969c9738db99"}, {"plots/window.gp", "520cbe1f9b777c21"},
    {"plots/latency.gp", "c3d03e4c0a8f11a0"}, {"plots/traffic.dat", "1651f9446a4c77ca"},
    {"plots/window.dat", "cfb2459b2e593fd8"}, {"plots/latency.dat", "99f62f1e1c5735c8"},
};

TEST(BehaviourPins, CompareWritesTheSameReport) {
  const fs::path dir = testing_files::TempDir("compare");
  const CliOutcome r = Ratelab({"compare", RATELAB_SOURCE_DIR "/scenarios/store-outage.yaml",
                                "--seed", "2", "--out", dir.string()});
  ASSERT_EQ(r.exit, 0) << r.err;
  ExpectPinned("compare stdout", Replace(BeforeReportPath(r.out), RATELAB_SOURCE_DIR, "SRC"),
               "5ff5562999648a6c");
  ExpectFilesPinned("compare", dir, kStoreOutageReport);

  // Rebuilt from its report.json, the views are the same bytes.
  const fs::path again = testing_files::TempDir("report");
  const CliOutcome rebuilt =
      Ratelab({"report", (dir / "report.json").string(), "--out", again.string()});
  ASSERT_EQ(rebuilt.exit, 0) << rebuilt.err;
  ExpectFilesPinned("report", again, kStoreOutageReport);
}

TEST(BehaviourPins, DemoWritesTheSameReport) {
  const fs::path dir = testing_files::TempDir("demo");
  const CliOutcome r = Ratelab({"demo", "--seed", "3", "--out", dir.string()});
  ASSERT_EQ(r.exit, 0) << r.err;
  ExpectPinned("demo stdout", BeforeReportPath(r.out), "782c6416d12233b1");
  ExpectFilesPinned("demo", dir,
                    {{"report.json", "d256fd3d0025f4db"},
                     {"report.md", "0ca2b70b3da141aa"},
                     {"junit.xml", "04feb573897996fd"},
                     {"report.html", "20eec04384d6067c"}});
}

TEST(BehaviourPins, ASweepsFirstFailingSeedRebuildsTheSameReport) {
  const fs::path dir = testing_files::TempDir("sweep");
  const CliOutcome r = Ratelab({"run", RATELAB_SOURCE_DIR "/scenarios/restart-mid-window.yaml",
                                "--seeds", "1..5", "--out", dir.string()});
  ASSERT_EQ(r.exit, 1) << r.err;
  ExpectPinned("sweep result.json",
               Replace(testing_files::Read(dir / "result.json"), RATELAB_SOURCE_DIR, "SRC"),
               "31a0958fb0b38464");
  const fs::path views = testing_files::TempDir("views");
  ASSERT_EQ(Ratelab({"report", (dir / "result.json").string(), "--out", views.string()}).exit, 0);
  ExpectFilesPinned("sweep report", views,
                    {{"report.md", "91016feeec81f7b5"},
                     {"junit.xml", "265c22a0044eb1e5"},
                     {"report.html", "1c971c020458cf00"}});
}

}  // namespace
}  // namespace ratelab
