// Pieces the views (html.cc, markdown.cc, junit.cc) share: escaping, number formats, what a
// check is called, and the rows of the verdict and cost tables. Internal to reports/.
#ifndef RATELAB_REPORTS_VIEW_PARTS_H_
#define RATELAB_REPORTS_VIEW_PARTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reports/output_dir.h"
#include "reports/report_model.h"

namespace ratelab::view_parts {

// What every view says of a limiter that failed rather than decide.
inline constexpr char kLimiterFailed[] =
    "the limiter answered a request with an error instead of a decision";

// How many violations of one check of one limiter the HTML and Markdown show (all are in the
// JSON).
inline constexpr size_t kShownViolations = 3;

// For HTML and XML text and attributes: markup escaped, and what XML cannot hold (bytes that
// are not UTF-8, control characters) written as U+FFFD.
std::string Escape(const std::string& s);
// `v` with `digits` decimals.
std::string Fixed(double v, int digits);
// A report's title: "ratelab: demo, seed 1"; "ratelab: demo, seeds 1..10 (seed 3 in full)" for a
// comparison over seeds.
std::string Title(const RunReport& r);
// "5 in any 1m".
std::string Claim(const RunReport& r);
// What each limiter was held to, in a sentence: "the claim 5 in any 1m per key", or "its own
// promise" where the scenario gave no claim.
std::string HeldTo(const RunReport& r);
// What the measures (over-admitted, false denials, max in any W) are against, as a noun: "the
// claim", or "5 in any 1m" where the scenario gave none (the first limiter's, a yardstick).
std::string Yardstick(const RunReport& r);
// Where the scenario gave no claim, the sentence that says so; else empty.
std::string NoClaimSentence(const RunReport& r);
// The zone the report's times are shown in: "UTC", or "UTC+01:00" (RunReport::utc_offset).
std::string Zone(const RunReport& r);
// The run's start on the clock of the report's zone, which its times are shown on (the report
// must have its start).
Instant ShownStart(const RunReport& r);
// The scenario's clock `at_s` after the run's start, in the report's zone, to the millisecond:
// "2026-03-14 09:00:01.500" (the report must have its start).
std::string OnClock(const RunReport& r, double at_s);

// `start` plus `seconds`, to the nanosecond; none where that is past what an Instant holds (a
// report read from a file may start in 2200 and put a request 126 years on).
std::optional<Instant> AfterStart(Instant start, double seconds);

// A span of seconds, to the microsecond at any length ("0", "412us", "1.009519s"): a witness's
// instants as finely as a limiter on the store's or a script's clock tells them apart.
std::string Offset(double seconds);

// Appends `item`, what check `check` broke, to `broke`; the claim's goes first.
void AddBroken(std::vector<std::string>& broke, CheckId check, std::string item);
// Sentences one after another, a space between each.
std::string Sentences(const std::vector<std::string>& sentences);
// "a", "a and b", "a, b and c".
std::string Listed(const std::vector<std::string>& items, std::string_view last = " and ");
// What a check is called in a table header: "claim: 5 in any 1m", "own promise", "key-expiry".
std::string CheckTitle(const RunReport& r, CheckId check);
// What a check is called in a sentence: "the claim", "own promise", "key-expiry".
std::string CheckPhrase(CheckId check);
// "kept", or "broken for N keys".
std::string Verdict(uint64_t broken);

using Rows = std::vector<std::vector<std::string>>;

// Takes out of `rows` (a header, then a row per limiter) each column from `from` on whose every
// limiter has the same cell, a cost that tells none apart, and says them in one sentence: "The
// same for every limiter: store steps per decision 1.00." Empty, and `rows` as it was, with
// fewer than two limiters. (The columns before `from`, the name and a verdict, always stay.)
std::string TakeSameColumns(Rows& rows, size_t from);
// The start of a self-contained HTML page, through <body>: its title and the one style sheet.
std::string HtmlPageStart(const std::string& title);
// A report that is text (check, stress, worst) as a Markdown section and as an HTML page, under
// `title`.
std::string TextMarkdown(const std::string& title, const std::string& text);
std::string TextHtml(const std::string& title, const std::string& text);

// A report's four files, as every command writes them: report.html, report.md, report.json and
// junit.xml.
struct ReportViews {
  std::string html, markdown, json, junit;
};
// Writes `views` into `dir` (OutputDir::WriteAll): the path of report.html.
Result<std::string> WriteViews(const ReportViews& views, const OutputDir& dir);
// The views of a report shown as text (check, stress): the text under `title` as the HTML page
// and the Markdown section, beside its JSON and JUnit.
ReportViews TextViews(const std::string& title, const std::string& text, std::string json,
                      std::string junit);
// Each of `texts` as an HTML paragraph, of the class `cls` where it is not empty.
std::string Paragraphs(const std::vector<std::string>& texts, const std::string& cls = "");
// `rows` (header first) as an HTML table; a cell "kept" shown good, one starting "broken" bad.
std::string HtmlTable(const Rows& rows);
// A Markdown table cell: `v` with each '|' escaped.
std::string MarkdownCell(std::string v);
// `rows` (header first) as a Markdown table, the first `left` columns left-aligned.
std::string MarkdownTable(const Rows& rows, size_t left);
// The verdict table, header first.
Rows VerdictRows(const RunReport& r);
// The costs and fairness table, header first.
Rows MetricRows(const RunReport& r);
// The table of a comparison over seeds (r.across_seeds), header first: each limiter's broken
// checks and its numbers as "median (worst W, seed S)"; with the latency column when
// `with_latency` and some decision took time.
Rows SpreadRows(const RunReport& r, bool with_latency);
// What the table of a comparison over seeds shows, in a sentence.
std::string AcrossSeedsIntro(const RunReport& r);

// Calls `visit(limiter, check)` for every check of every limiter, in order; returns how many
// checks were broken.
template <typename Visit>
int64_t ForEachCheck(const RunReport& r, Visit visit) {
  int64_t broken = 0;
  for (const LimiterReport& l : r.limiters) {
    for (const CheckCount& c : l.checks) {
      broken += c.violations > 0;
      visit(l, c);
    }
  }
  return broken;
}

// A JUnit test case: passed when `failure` is empty, else failed with `message` and the text
// `failure`; an error (the limiter failed, not a verdict) when `error`; skipped, with the reason
// `skipped`, when that is not empty and it neither failed nor erred (a check that did not run, or
// could not decide, never passes).
struct JunitCase {
  std::string classname, name;
  double seconds = 0;
  std::string message, failure;
  bool error = false;
  std::string skipped = {};
};
// The JUnit XML document of one suite named `suite` that took `seconds`.
std::string JunitDocument(const std::string& suite, const std::vector<JunitCase>& cases,
                          double seconds);
// A witness as text, the one layout of every text view (check, JUnit): one line per send, store
// step and answer, and per fault that touches it, each at its offset from the first
// ("  +250ms         #3 node 1  admitted"), as short as Offset writes it.
std::string TimelineText(const ViolationReport& v, const std::vector<FaultReport>& faults);
// The same after a line naming what it broke: "any-window-cap on key K".
std::string WitnessText(const ViolationReport& v, const std::vector<FaultReport>& faults);

// Violations of `limiter`'s check `check`, at most `max` (all when max is 0).
std::vector<const ViolationReport*> ViolationsOf(const LimiterReport& limiter, CheckId check,
                                                 size_t max);

}  // namespace ratelab::view_parts

#endif  // RATELAB_REPORTS_VIEW_PARTS_H_
