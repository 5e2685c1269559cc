// report.html: one self-contained page for a design review (plots inline, no network needed).
#include "reports/advice.h"
#include "reports/plots.h"
#include "reports/timeline.h"
#include "reports/view_parts.h"
#include "reports/views.h"

namespace ratelab {

namespace {

using view_parts::CheckTitle;
using view_parts::Claim;
using view_parts::Escape;
using view_parts::Fixed;
using view_parts::Rows;
using view_parts::Verdict;

std::string HtmlTable(const Rows& rows) {
  std::string s = "<table>\n<tr>";
  for (const std::string& h : rows[0]) s += "<th>" + Escape(h) + "</th>";
  s += "</tr>\n";
  for (size_t i = 1; i < rows.size(); ++i) {
    s += "<tr>";
    for (const std::string& cell : rows[i]) {
      const char* cls = cell.rfind("broken", 0) == 0 ? " class=\"bad\""
                        : cell == "kept"             ? " class=\"good\""
                                                     : "";
      s += std::string("<td") + cls + ">" + Escape(cell) + "</td>";
    }
    s += "</tr>\n";
  }
  return s + "</table>\n";
}

std::string HtmlWitness(const ViolationReport& v, const std::vector<FaultReport>& faults) {
  std::string s = "<p class=\"summary\"><b>" + Escape(v.invariant) + "</b> on key <code>" +
                  Escape(v.key) + "</code>: " + Escape(v.summary) + "</p>\n";
  s += "<table class=\"timeline\">\n<tr><th>time (s since start)</th><th>+ms</th><th>request</th>"
       "<th>node</th><th>what happened</th></tr>\n";
  const std::vector<TimelineRow> rows = WitnessTimeline(v.witness, faults);
  for (const TimelineRow& row : rows) {
    const bool admitted = row.what == "admitted", denied = row.what.rfind("denied", 0) == 0;
    s += std::string("<tr") +
         (admitted ? " class=\"good\""
          : denied ? " class=\"bad\""
                   : "") +
         "><td>" + Fixed(row.at_s, 6) + "</td><td>" +
         Fixed((row.at_s - rows.front().at_s) * 1000, 3) + "</td><td>" +
         (row.id < 0 ? std::string() : "#" + std::to_string(row.id)) + "</td><td>" +
         Escape(row.node) + "</td><td>" + Escape(row.what) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string Paragraphs(const std::vector<std::string>& texts, const char* cls) {
  std::string s;
  for (const std::string& t : texts)
    s += std::string("<p class=\"") + cls + "\">" + Escape(t) + "</p>\n";
  return s;
}

// SVG from gnuplot, made fit to sit inline beside others: no XML prolog, its ids prefixed with
// the plot's name so two plots' ids cannot clash.
std::string InlineSvg(const std::string& name, std::string svg) {
  if (const size_t at = svg.find("<svg"); at != std::string::npos) svg.erase(0, at);
  if (const size_t at = svg.find("<title>Gnuplot</title>"); at != std::string::npos) {
    svg.replace(at, 22, "<title>" + name + "</title>");
  }
  // Prefix every id, and every reference to one.
  for (const std::string_view before : {"id='", "id=\"", "href='#", "href=\"#", "url(#"}) {
    for (size_t at = svg.find(before); at != std::string::npos; at = svg.find(before, at + 1)) {
      svg.insert(at + before.size(), name + "-");
    }
  }
  return svg;
}

constexpr char kStyle[] = R"(
body { font-family: sans-serif; max-width: 1000px; margin: 2em auto; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.good, tr.good td { background: #e6f4e6; } td.bad, tr.bad td { background: #fbe3e3; }
code, pre { background: #f6f6f6; padding: .1em .3em; }
pre { padding: .6em; overflow-x: auto; }
figure { margin: 1.5em 0; } figcaption { color: #555; font-size: .9em; }
figure svg { width: 100%; height: auto; }
.summary { margin-bottom: .2em; }
.advice { font-size: 1.05em; } .explain { color: #444; font-size: .9em; }
@media print { h2 { page-break-before: auto; } figure, table { page-break-inside: avoid; } }
)";

}  // namespace

std::string RenderHtml(const RunReport& r, const std::map<std::string, std::string>& svgs,
                       const std::string& plot_error) {
  const std::string title = "ratelab: " + r.scenario + ", seed " + std::to_string(r.seed);
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  Escape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  s += "<h1>" + Escape(title) + "</h1>\n";
  if (!r.description.empty()) s += "<p>" + Escape(r.description) + "</p>\n";
  const Advice advice = Advise(r);
  s += "<h2 id=\"recommendation\">Recommendation</h2>\n<p class=\"advice\">";
  for (const std::string& sentence : advice.summary) s += Escape(sentence) + " ";
  s += "</p>\n";
  if (!advice.picks.empty()) {
    Rows rows = {{"to", "pick", "because", "and it"}};
    for (const Pick& p : advice.picks) rows.push_back({p.goal, p.limiter, p.because, p.but});
    s += HtmlTable(rows);
  }
  s += "<h2>The scenario</h2>\n<p>Every limiter is held to the claim <b>" + Escape(Claim(r)) +
       "</b> per key, on the same traffic:</p>\n<ul>\n";
  for (const std::string& t : r.traffic) s += "<li>" + Escape(t) + "</li>\n";
  s += "</ul>\n";
  if (!r.faults.empty()) {
    s += "<p>Faults (shaded on the time plots):</p>\n<ul>\n";
    for (const FaultReport& f : r.faults) s += "<li>" + Escape(f.what) + "</li>\n";
    s += "</ul>\n";
  }
  s += "<p>Seed " + Escape(std::to_string(r.seed)) + ", history hash <code>" +
       Escape(r.history_hash) + "</code>" +
       (r.buggify ? ", BUGGIFY on (rare step delays made common)" : "") + ".</p>\n";

  s += "<h2>Verdicts</h2>\n" + HtmlTable(view_parts::VerdictRows(r));
  s += Paragraphs(ExplainVerdicts(r), "explain");
  for (const LimiterReport& l : r.limiters) {
    if (l.failed == 0) continue;
    s += "<p class=\"bad\"><b>" + Escape(l.name) + " FAILED</b>: " + std::to_string(l.failed) +
         " request(s) answered with the limiter's own error instead of a decision, so its "
         "verdicts cannot be trusted. The first: " +
         Escape(l.failure) + "</p>\n";
  }
  for (const std::string& note : r.notes) {
    s += "<p class=\"note\">Note: " + Escape(note) + "</p>\n";
  }
  s += "<h2>Costs and fairness</h2>\n" + HtmlTable(view_parts::MetricRows(r));
  s += Paragraphs(ExplainCosts(r), "explain");
  if (!r.faults.empty()) {
    Rows rows = {{"fault", "limiter", "offered", "admitted", "denied", "unanswered"}};
    for (const LimiterReport& l : r.limiters) {
      for (const FaultOutcomeReport& f : l.metrics.during_faults) {
        rows.push_back({f.fault, l.name, std::to_string(f.offered), std::to_string(f.admitted),
                        std::to_string(f.denied), std::to_string(f.unanswered)});
      }
    }
    s += "<h2>During the faults</h2>\n" + HtmlTable(rows);
  }

  s += "<h2>Plots</h2>\n";
  if (!plot_error.empty()) s += "<p class=\"bad\">No plots: " + Escape(plot_error) + "</p>\n";
  for (const Plot& p : PlotScripts(r)) {
    auto it = svgs.find(p.name);
    if (it == svgs.end()) continue;
    s += "<figure id=\"plot-" + p.name + "\">\n" + InlineSvg(p.name, it->second) + "<figcaption>" +
         Escape(p.caption) + "</figcaption>\n</figure>\n";
  }

  s += "<h2>Violations</h2>\n";
  const int64_t broken =
      view_parts::ForEachCheck(r, [&](const LimiterReport& l, const CheckCount& check) {
        if (check.violations == 0) return;
        s += "<h3>" + Escape(l.name) + ": " + Escape(CheckTitle(r, check.name)) + " " +
             Escape(Verdict(check.violations)) + "</h3>\n";
        for (const ViolationReport* v :
             view_parts::ViolationsOf(l, check.name, view_parts::kShownViolations)) {
          s += HtmlWitness(*v, r.faults);
        }
        if (check.violations > view_parts::kShownViolations) {
          s += "<p>... and " + std::to_string(check.violations - view_parts::kShownViolations) +
               " more, each with its witness in report.json.</p>\n";
        }
      });
  if (broken == 0) s += "<p class=\"good\">None: every limiter kept every check.</p>\n";

  if (r.reproduce) {
    s += "<h2>Reproduce</h2>\n<pre>" + Escape(*r.reproduce) +
         "</pre>\n<p>The same seed gives the same history hash.</p>\n";
  }
  return s + "</body>\n</html>\n";
}

}  // namespace ratelab
