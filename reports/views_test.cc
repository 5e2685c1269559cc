#include "reports/views.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "reports/plots.h"
#include "reports/run_report.h"
#include "reports/view_parts.h"
#include "sim/scenario.h"
#include "testing/files.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
using testing_files::Read;
using testing_files::TempDir;

// "" when every tag of `text` is closed in order (void and self-closed tags aside), or what is
// wrong. Enough of a parser for what ratelab writes: no '<' in text or attribute values.
std::string CheckTags(const std::string& text) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open;
  for (size_t at = text.find('<'); at != std::string::npos; at = text.find('<', at + 1)) {
    const size_t end = text.find('>', at);
    if (end == std::string::npos) return "unclosed '<' at " + std::to_string(at);
    const std::string tag = text.substr(at + 1, end - at - 1);
    if (tag.empty()) return "empty tag at " + std::to_string(at);
    if (tag[0] == '!' || tag[0] == '?') continue;
    if (tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) {
        return "</" + name + "> at " + std::to_string(at) + " closes <" +
               (open.empty() ? std::string("nothing") : open.back()) + ">";
      }
      open.pop_back();
      continue;
    }
    if (tag.back() == '/') continue;
    const std::string name = tag.substr(0, tag.find_first_of(" \n\t"));
    if (kVoid.count(name) == 0) open.push_back(name);
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

RunReport DemoData() {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  EXPECT_TRUE(c.ok());
  RunReport r = MakeRunReport(*c);
  r.reproduce = "ratelab demo --seed 1";
  return r;
}

// A cost every limiter shares tells none apart: it leaves its table and is said once. The name
// and the verdict stay, and so does every column with one limiter.
TEST(Report, ACostEveryLimiterSharesIsSaidOnceNotAsAColumn) {
  view_parts::Rows rows = {{"limiter", "verdict", "steps", "bytes", "p99"},
                           {"a", "kept", "1.00", "16", "0.000"},
                           {"b", "kept", "1.00", "266", "0.000"}};
  EXPECT_EQ(view_parts::TakeSameColumns(rows, 2),
            "The same for every limiter: steps 1.00 and p99 0.000.");
  EXPECT_EQ(rows, (view_parts::Rows{
                      {"limiter", "verdict", "bytes"}, {"a", "kept", "16"}, {"b", "kept", "266"}}));
  view_parts::Rows one = {{"limiter", "steps"}, {"a", "1.00"}};
  EXPECT_EQ(view_parts::TakeSameColumns(one, 1), "");
  EXPECT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].size(), 2u);
}

TEST(Report, HtmlIsWellFormedSelfContainedAndEmbedsEveryPlot) {
  const RunReport data = DemoData();
  const fs::path dir = TempDir("html");
  Result<ReportFiles> files = WriteReport(data, *OutputDir::Prepare(dir.string(), false, "dir"));
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->plot_error, "") << "gnuplot must be installed (scripts/common.sh)";
  const std::string html = Read(files->html);
  EXPECT_EQ(CheckTags(html), "");
  const std::vector<Plot> plots = PlotScripts(data);
  ASSERT_GE(plots.size(), 3u);
  // Every plot, and a picture of each witness shown.
  EXPECT_EQ(Count(html, "<svg"), plots.size() + Count(html, "<svg class=\"witness\""));
  EXPECT_EQ(Count(html, "<svg class=\"witness\""), Count(html, "class=\"timeline\""));
  for (const Plot& p : plots) {
    const size_t figure = html.find("<figure id=\"plot-" + p.name + "\">");
    ASSERT_NE(figure, std::string::npos) << p.name;
    EXPECT_EQ(html.find("<svg", figure), html.find('<', figure + 1)) << p.name << " not inline";
    EXPECT_TRUE(fs::exists(dir / "plots" / (p.name + ".svg"))) << p.name;
  }
  // Nothing to fetch: no scripts, no external resources, ids unique across the plots.
  EXPECT_EQ(Count(html, "<script"), 0u);
  EXPECT_EQ(Count(html, "src="), 0u);
  EXPECT_EQ(Count(html, "href=\"http"), 0u);
  EXPECT_EQ(Count(html, "url(http"), 0u);
  EXPECT_EQ(Count(html, "id='gpPt0'"), 0u);
  EXPECT_EQ(Count(html, "id='window-gpPt0'"), 1u);
  // The fault-free demo still has what a reviewer needs: the verdicts, a witness timeline, the
  // command to reproduce.
  EXPECT_NE(html.find("<td class=\"bad\">broken for 3 keys</td>"), std::string::npos);
  EXPECT_NE(html.find("class=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("<pre>ratelab demo --seed 1</pre>"), std::string::npos);
}

TEST(Report, TheRecommendationComesFirstAndEachTableIsExplained) {
  const RunReport data = DemoData();
  const std::string html = RenderHtml(data, {}, "");
  const size_t advice = html.find("<h2 id=\"recommendation\">Recommendation</h2>");
  ASSERT_NE(advice, std::string::npos);
  EXPECT_LT(advice, html.find("<h2 id=\"scenario\">The scenario</h2>"));
  EXPECT_EQ(Count(html.substr(0, advice), "<h2"), 0u);  // the first section
  EXPECT_NE(html.find("only memory-sliding-log kept the claim", advice), std::string::npos);
  EXPECT_NE(html.find("<tr><th>to</th><th>pick</th><th>because</th><th>and it</th></tr>", advice),
            std::string::npos);
  // Each table is followed by what its columns mean, with this run's numbers.
  const size_t verdicts = html.find("<h2 id=\"verdicts\">Verdicts</h2>");
  EXPECT_NE(html.find("keep their own promise and still over-admit", verdicts), std::string::npos);
  const size_t costs = html.find("<h2 id=\"costs\">Costs and fairness</h2>");
  EXPECT_NE(html.find("the number in brackets is n", costs), std::string::npos);

  const std::string md = RenderMarkdown(data);
  EXPECT_LT(md.find("only memory-sliding-log kept the claim"), md.find("| limiter |"));
  EXPECT_NE(md.find("- To keep the claim exactly: **memory-sliding-log**"), std::string::npos);
}

TEST(Report, WitnessesAreShortSharedAndCollapsedBelowTheFirst) {
  const RunReport data = DemoData();
  const std::string html = RenderHtml(data, {}, "");
  // A table of contents linking every section the page has.
  for (const char* id :
       {"recommendation", "scenario", "verdicts", "costs", "plots", "violations", "reproduce"}) {
    EXPECT_NE(html.find(std::string("<a href=\"#") + id + "\">"), std::string::npos) << id;
    EXPECT_NE(html.find(std::string("<h2 id=\"") + id + "\">"), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("href=\"#faults\""), std::string::npos);  // the demo has none
  // The buckets' witnesses are the same: shown once, under both names.
  EXPECT_EQ(Count(html,
                  "<h3>memory-token-bucket and memory-gcra: claim: 5 in any 1m broken for "
                  "3 keys</h3>"),
            1u);
  EXPECT_EQ(Count(html, "<h3>memory-gcra"), 0u);
  // The first open, the others collapsed.
  EXPECT_EQ(Count(html, "<details "), 3u);
  EXPECT_EQ(Count(html, " open>"), 1u);
  EXPECT_NE(html.find("<details id=\"finding-1\" open><summary><h3>memory-fixed-window:"),
            std::string::npos);
  // One row per request, on the scenario's clock and since the witness began; no nanoseconds.
  EXPECT_NE(html.find("<tr><th>request</th><th>sent (2026-01-01 UTC)</th><th>+</th>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr class=\"good\"><td>#91</td><td>00:01:59.600</td><td>+100ms</td>"
                      "<td>node 0</td><td>admitted</td></tr>"),
            std::string::npos);
  const size_t violations = html.find("<h2 id=\"violations\">");
  EXPECT_EQ(Count(html.substr(violations), "step:"), 0u);  // one step says nothing more
}

// An admission that goes after a wait, or that the client decided itself, is an admission.
TEST(Report, AnAdmissionWithAWaitOrByTheClientIsShownAsOne) {
  RunReport data = DemoData();
  for (LimiterReport& l : data.limiters) {
    for (ViolationReport& v : l.violations) {
      for (WitnessEvent& e : v.witness) {
        if (e.id == 91) e.outcome = "admitted, to go after 1s";
      }
    }
  }
  const std::string html = RenderHtml(data, {}, "");
  EXPECT_NE(html.find("<tr class=\"good\"><td>#91</td><td>00:01:59.600</td><td>+100ms</td>"
                      "<td>node 0</td><td>admitted, to go after 1s</td></tr>"),
            std::string::npos);
}

// Each of these, once in a report.json, ran as a gnuplot command (a user key that ends the
// inline data, a name that ends its string, a backquote) or as markup in report.html.
TEST(Report, NothingFromAReportReachesGnuplotOrTheHtmlAsCode) {
  RunReport data = DemoData();
  ASSERT_GE(data.limiters.size(), 3u);
  ASSERT_FALSE(data.users.empty());
  data.limiters[0].name = "a'\nsystem('touch pwned-name')\n'";
  data.limiters[1].name = "`touch pwned-backquote` <script>alert(1)</script>";
  data.limiters[2].name = "line\rbreak @macro $block";
  data.users[0].key = "u\nEOD\nsystem('touch pwned-user')\n\"";
  data.bins.width = "5s'\nsystem('touch pwned-width')\n'";
  data.claim.window = "1m' . system('touch pwned-window') . '";
  const fs::path dir = TempDir("hostile");
  Result<ReportFiles> files = WriteReport(data, *OutputDir::Prepare(dir.string(), false, "dir"));
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->plot_error, "") << "every plot is drawn all the same";
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find("pwned"), std::string::npos) << e.path();
  }
  for (const Plot& p : PlotScripts(data)) {
    EXPECT_EQ(GnuplotScriptProblem(p.script), "") << p.name;
    EXPECT_NE(Read(dir / "plots" / (p.name + ".gp")).find(p.script), std::string::npos);
  }
  const std::string html = Read(files->html);
  EXPECT_EQ(Count(html, "<script"), 0u);
  EXPECT_EQ(CheckTags(html), "");
}

TEST(Report, TheScriptCheckerFindsWhatWouldRunAsCode) {
  EXPECT_EQ(GnuplotScriptProblem("set title 'it''s `fine` @here'\nplot 'plots/x.dat' index 0\n"),
            "");
  EXPECT_EQ(GnuplotScriptProblem("set title 'a'\nsystem('id')\n"),
            "line 2: the word 'system' outside a string");
  EXPECT_EQ(GnuplotScriptProblem("set title \"`id`\"\n"), "line 1: '\"' outside a string");
  EXPECT_EQ(GnuplotScriptProblem("set title 'a\nb'\n"), "line 1: a string does not end");
  EXPECT_EQ(GnuplotScriptProblem("plot $users using 1\n"), "line 1: '$' outside a string");
}

// A bin width that makes the time axis spin gnuplot forever, read from a report.json.
TEST(Report, BinsThatWouldNeverFinishDrawingAreRefusedWhereTheyAre) {
  nlohmann::json j = ToJson(DemoData());
  j["bins"]["width_ms"] = -1e19;
  Result<RunReport> read = RunReportFromJson(j);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "bins.width_ms: expected a number from 1e-06 to 3.2e+10");
  j = ToJson(DemoData());
  j["bins"]["count"] = 1'000'000'000;
  EXPECT_EQ(RunReportFromJson(j).status().message(),
            "bins.count: expected a whole number from 0 to 100000");
}

// gnuplot past its time is killed with every process it started.
TEST(Plots, GnuplotPastItsLimitIsStoppedWithItsWholeGroup) {
  const fs::path dir = TempDir("spin") / "plots";
  const std::string script =
      "system('sh -c \"echo \\$\\$ > plots/sleeper.pid; exec sleep 30\" &')\n"
      "while (1) { }\n";
  const auto start = std::chrono::steady_clock::now();
  const Status s =
      DrawPlots({Plot{"spin", "", script, "", 360}}, dir.string(), std::chrono::milliseconds(500));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  EXPECT_NE(s.message().find("took longer than 500ms"), std::string::npos) << s;
  const std::string pid_text = Read(dir / "sleeper.pid");
  ASSERT_FALSE(pid_text.empty());
  const pid_t sleeper = std::stoi(pid_text);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(sleeper, 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the sleep gnuplot started is still running";
}

TEST(Report, PlotsFitTheirDataSayOnlyWhatTheRunHasAndRunAgainFromTheReport) {
  const RunReport demo = DemoData();
  for (const Plot& p : PlotScripts(demo)) {
    EXPECT_EQ(p.caption.find("haded"), std::string::npos) << p.name << ": the demo has no faults";
  }
  const std::vector<Plot> plots = PlotScripts(demo);
  ASSERT_GE(plots.size(), 2u);
  // Each peak past the claim, with what made it, from the run's numbers.
  EXPECT_NE(plots[1].caption.find(
                "memory-fixed-window up to 10 in the 00:02:00.000 bin, across a window edge"),
            std::string::npos)
      << plots[1].caption;
  EXPECT_NE(plots[1].caption.find("memory-gcra up to 9 in the 00:00:55.000 bin, a full bucket, "
                                  "then its refill"),
            std::string::npos)
      << plots[1].caption;
  // On the scenario's clock, from the first request (2026-01-01 00:00:00 UTC) to the last bin.
  EXPECT_NE(plots[0].script.find("set xdata time"), std::string::npos);
  EXPECT_NE(plots[0].script.find("set xrange ['1767225600.000':'1767225900.000']"),
            std::string::npos)
      << plots[0].script.substr(0, 400);

  Result<Scenario> outage = LoadScenario(RATELAB_SOURCE_DIR "/scenarios/store-outage.yaml");
  ASSERT_TRUE(outage.ok()) << outage.status();
  Result<RunResult> run = RunScenario(*outage, 1);
  ASSERT_TRUE(run.ok()) << run.status();
  const std::vector<Plot> outage_plots = PlotScripts(MakeRunReport(*run));
  EXPECT_NE(outage_plots[0].caption.find("Shaded: faults."), std::string::npos);
  // A peak made by failing open during the outage is blamed on the outage, not on the window's
  // edge; one user's shares compare nothing, so there is no fairness plot.
  EXPECT_NE(outage_plots[1].caption.find("kv-fixed-window-lua (fail-open) up to 16 in the "
                                         "00:02:00.000 bin, while the store was unreachable"),
            std::string::npos)
      << outage_plots[1].caption;
  for (const Plot& p : outage_plots) EXPECT_NE(p.name, "users");
  // Its one fault is one note, each limiter's part in it.
  ASSERT_EQ(run->notes.size(), 1u);
  EXPECT_NE(run->notes[0].find("(fail-open) cannot reach its store, so it does what it does on a "
                               "store error: fail-open; kv-fixed-window-lua (fail-closed)"),
            std::string::npos)
      << run->notes[0];

  // cd REPORT && gnuplot plots/window.gp draws plots/window.svg again.
  const fs::path dir = TempDir("rerun");
  Result<ReportFiles> files = WriteReport(demo, *OutputDir::Prepare(dir.string(), false, "dir"));
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->plot_error, "");
  fs::remove(dir / "plots" / "window.svg");
  const std::string command = "cd '" + dir.string() + "' && gnuplot plots/window.gp 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_TRUE(fs::exists(dir / "plots" / "window.svg"));
}

TEST(Report, JunitHasOneCasePerLimiterAndCheckAndFailsTheFixedWindowsBoundaryBurst) {
  const std::string xml = RenderJunit(DemoData());
  EXPECT_EQ(CheckTags(xml), "");
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_EQ(Count(xml, "<testcase "), 10u);  // 5 limiters x 2 checks
  EXPECT_NE(xml.find("<testsuites name=\"ratelab\" tests=\"10\" failures=\"4\""),
            std::string::npos);
  const size_t fixed =
      xml.find("<testcase classname=\"demo.memory-fixed-window\" name=\"any-window-cap\"");
  ASSERT_NE(fixed, std::string::npos);
  EXPECT_EQ(xml.find("<failure type=\"any-window-cap\"", fixed), xml.find('<', fixed + 1));
  EXPECT_NE(xml.find("span 500ms &lt; 1m", fixed), std::string::npos);  // escaped
  const size_t log =
      xml.find("<testcase classname=\"demo.memory-sliding-log\" name=\"any-window-cap\"");
  ASSERT_NE(log, std::string::npos);
  EXPECT_EQ(xml.substr(log, xml.find('\n', log) - log).back(), '>');
  EXPECT_NE(xml.find("time=\"0.000\"/>", log), std::string::npos);
  EXPECT_EQ(xml.find("/>", log), xml.find('\n', log) - 2);  // passed: no failure element
}

TEST(Report, MarkdownPutsTheVerdictsFirstInSixColumnsAndTheRestCollapsed) {
  const std::string md = RenderMarkdown(DemoData());
  EXPECT_NE(md.find("| limiter | verdict | admitted / offered | over-admitted | false denials | "
                    "max in any 1m |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| memory-fixed-window | broke the claim (3 keys) | 205 / 241 | 21 | 0 | "
                    "10 (2.00x) |"),
            std::string::npos);
  EXPECT_NE(md.find("| memory-sliding-log | kept | 195 / 241 | 0 | 0 | 5 (1.00x) |"),
            std::string::npos);
  // Above the collapsed details, no table is wider than six columns.
  const size_t details = md.find("<details><summary>");
  ASSERT_NE(details, std::string::npos);
  for (size_t at = md.find("\n|"); at < details; at = md.find("\n|", at + 1)) {
    const std::string line = md.substr(at + 1, md.find('\n', at + 1) - at - 1);
    EXPECT_LE(Count(line, " |"), 6u) << line;
  }
  EXPECT_GT(md.find("- **memory-fixed-window** broke *claim: 5 in any 1m*"), details);
  EXPECT_EQ(md.find("- **memory-sliding-log** broke"), std::string::npos);
  EXPECT_NE(md.find("</details>"), std::string::npos);
  // No links: a comment pasted into a pull request has no files beside it.
  EXPECT_EQ(md.find("]("), std::string::npos);
  EXPECT_NE(md.find("Reproduce: `ratelab demo --seed 1`"), std::string::npos);
}

TEST(Report, SameDataSameBytes) {
  const RunReport data = DemoData();
  const fs::path a = TempDir("same-a"), b = TempDir("same-b");
  ASSERT_TRUE(WriteReport(data, *OutputDir::Prepare(a.string(), false, "dir")).ok());
  ASSERT_TRUE(WriteReport(DemoData(), *OutputDir::Prepare(b.string(), false, "dir")).ok());
  for (const char* f : {"report.html", "report.md", "report.json", "junit.xml"}) {
    EXPECT_EQ(Read(a / f), Read(b / f)) << f;
  }
}

}  // namespace
}  // namespace ratelab
