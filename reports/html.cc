// report.html: one self-contained page for a design review (plots inline, no network needed).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "reports/advice.h"
#include "reports/plots.h"
#include "reports/timeline.h"
#include "reports/view_parts.h"
#include "reports/views.h"
#include "reports/witness_page.h"
#include "reports/witness_picture.h"

namespace ratelab {

namespace {

using view_parts::CheckTitle;
using view_parts::Claim;
using view_parts::Escape;
using view_parts::Fixed;
using view_parts::HtmlTable;
using view_parts::Offset;
using view_parts::OnClock;
using view_parts::Rows;
using view_parts::Verdict;

// When, `at_s` after the run's start, on the scenario's clock without the date (the table's
// header has it); seconds since the start in a report that has no start.
std::string ClockTime(const RunReport& r, double at_s) {
  if (!r.start) return Fixed(at_s, 3) + "s";
  const std::string t = OnClock(r, at_s);
  return t.substr(t.find(' ') + 1);
}

// The date of the scenario's clock at `at_s`, for a header: "2026-01-01 UTC", "2026-03-14
// UTC+01:00".
std::string ClockDate(const RunReport& r, double at_s) {
  if (!r.start) return "s since the start";
  const std::string t = OnClock(r, at_s);
  return (t.find(' ') == std::string::npos ? "1970-01-01" : t.substr(0, t.find(' '))) + " " +
         view_parts::Zone(r);
}

// What it broke, the witness drawn, and a row per request: when it was sent (the scenario's clock,
// and since the witness began), its store steps when it took several, what it got.
std::string HtmlWitness(const RunReport& r, const ViolationReport& v) {
  // The summary's times are UTC's, whatever zone the table shows.
  std::string s = "<p class=\"summary\"><b>" + Escape(std::string(CheckName(v.invariant))) +
                  "</b> on key <code>" + Escape(v.key) + "</code>: " + Escape(v.summary) +
                  (r.utc_offset ? " (times in UTC)" : "") + "</p>\n";
  if (v.witness.empty()) return s;
  return s + "<figure>" + WitnessSvg(PictureOf(v, r.faults, "node", r.start)) + "</figure>\n" +
         HtmlWitnessTable(
             v, r.faults, [&](double at_s) { return ClockTime(r, at_s); },
             ClockDate(r, v.witness.front().invoke_s));
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

// The page's sections, in order, each with the id the table of contents links to.
struct Section {
  const char* id;
  const char* title;
};
constexpr Section kRecommendation{"recommendation", "Recommendation"};
constexpr Section kAcrossSeeds{"seeds", "Across seeds"};
constexpr Section kScenario{"scenario", "The scenario"};
constexpr Section kVerdicts{"verdicts", "Verdicts"};
constexpr Section kCosts{"costs", "Costs and fairness"};
constexpr Section kFaults{"faults", "During the faults"};
constexpr Section kPlots{"plots", "Plots"};
constexpr Section kViolations{"violations", "Violations"};
constexpr Section kReproduce{"reproduce", "Reproduce"};

std::string Heading(const Section& section) {
  return std::string("<h2 id=\"") + section.id + "\">" + section.title + "</h2>\n";
}

// One line of links to the sections the page has.
std::string Contents(const std::vector<Section>& sections) {
  std::string s = "<nav class=\"contents\">";
  for (size_t i = 0; i < sections.size(); ++i) {
    s += std::string(i == 0 ? "" : " &middot; ") + "<a href=\"#" + sections[i].id + "\">" +
         sections[i].title + "</a>";
  }
  return s + "</nav>\n";
}

// The witnesses of every broken check, limiters whose witnesses are the same shown once under
// all their names; the first open, the others collapsed, a list of them first.
std::string Violations(const RunReport& r) {
  struct Finding {
    std::vector<std::string> limiters;
    std::string title;  // "claim: 5 in any 1m broken for 3 keys"
    std::string body;   // the witnesses
  };
  std::vector<Finding> findings;
  view_parts::ForEachCheck(r, [&](const LimiterReport& l, const CheckCount& check) {
    if (check.violations == 0) return;
    std::string body;
    for (const ViolationReport* v :
         view_parts::ViolationsOf(l, check.check, view_parts::kShownViolations)) {
      body += HtmlWitness(r, *v);
    }
    if (check.violations > view_parts::kShownViolations) {
      body += "<p>... and " + std::to_string(check.violations - view_parts::kShownViolations) +
              " more, each with its witness in report.json.</p>\n";
    }
    const std::string title = CheckTitle(r, check.check) + " " + Verdict(check.violations);
    for (Finding& f : findings) {
      if (f.title == title && f.body == body) {
        f.limiters.push_back(l.name);
        return;
      }
    }
    findings.push_back({{l.name}, title, std::move(body)});
  });
  if (findings.empty()) return "<p class=\"good\">None: every limiter kept every check.</p>\n";
  const auto name = [](const Finding& f) {
    return view_parts::Listed(f.limiters) + ": " + f.title;
  };
  std::string s = "<ul>\n";
  for (size_t i = 0; i < findings.size(); ++i) {
    s += "<li><a href=\"#finding-" + std::to_string(i + 1) + "\">" + Escape(name(findings[i])) +
         "</a>" + (findings[i].limiters.size() > 1 ? " (the same witnesses)" : "") + "</li>\n";
  }
  s += "</ul>\n";
  for (size_t i = 0; i < findings.size(); ++i) {
    s += "<details id=\"finding-" + std::to_string(i + 1) + "\"" + (i == 0 ? " open" : "") +
         "><summary><h3>" + Escape(name(findings[i])) + "</h3></summary>\n" + findings[i].body +
         "</details>\n";
  }
  return s;
}

}  // namespace

std::string RenderHtml(const RunReport& r, const std::map<std::string, std::string>& svgs,
                       const std::string& plot_error) {
  const std::string title = view_parts::Title(r);
  std::string s = view_parts::HtmlPageStart(title);
  s += "<h1>" + Escape(title) + "</h1>\n";
  if (!r.description.empty()) s += "<p>" + Escape(r.description) + "</p>\n";
  std::vector<Section> sections = {kRecommendation};
  if (r.across_seeds) sections.push_back(kAcrossSeeds);
  sections.insert(sections.end(), {kScenario, kVerdicts, kCosts});
  if (!r.faults.empty()) sections.push_back(kFaults);
  sections.insert(sections.end(), {kPlots, kViolations});
  if (r.reproduce) sections.push_back(kReproduce);
  s += Contents(sections);
  const Advice advice = Advise(r);
  s += Heading(kRecommendation);
  if (!advice.across_seeds.empty()) {
    s += "<p class=\"advice\">" + Escape(view_parts::Sentences(advice.across_seeds)) + " </p>\n";
  }
  s += "<p class=\"advice\">" + Escape(view_parts::Sentences(advice.summary)) + " </p>\n";
  if (!advice.picks.empty()) {
    Rows rows = {{"to", "pick", "because", "and it"}};
    for (const Pick& p : advice.picks) rows.push_back({p.goal, p.limiter, p.because, p.but});
    s += HtmlTable(rows) + "<p>" + Escape(advice.how_picked) + "</p>\n";
  }
  if (!advice.quote.empty()) s += "<p class=\"advice\"><b>" + Escape(advice.quote) + "</b></p>\n";
  if (r.across_seeds) {
    Rows spread = view_parts::SpreadRows(r, true);
    const std::string same = view_parts::TakeSameColumns(spread, 2);
    s += Heading(kAcrossSeeds) + "<p>" + Escape(view_parts::AcrossSeedsIntro(r)) + "</p>\n" +
         HtmlTable(spread) + (same.empty() ? "" : "<p>" + Escape(same) + "</p>\n");
  }
  s += Heading(kScenario) +
       (r.claim.not_given
            ? "<p>" + Escape(view_parts::NoClaimSentence(r)) + " On the same traffic:</p>\n<ul>\n"
            : "<p>Every limiter is held to the claim <b>" + Escape(Claim(r)) +
                  "</b> per key, on the same traffic:</p>\n<ul>\n");
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

  s += Heading(kVerdicts) + HtmlTable(view_parts::VerdictRows(r));
  s += view_parts::Paragraphs(ExplainVerdicts(r), "explain");
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
  Rows costs = view_parts::MetricRows(r);
  const std::string same_costs = view_parts::TakeSameColumns(costs, 1);
  s += Heading(kCosts) + HtmlTable(costs) +
       (same_costs.empty() ? "" : "<p>" + Escape(same_costs) + "</p>\n");
  s += view_parts::Paragraphs(ExplainCosts(r), "explain");
  if (!r.faults.empty()) {
    Rows rows = {{"fault", "limiter", "offered", "admitted", "denied", "unanswered"}};
    for (const LimiterReport& l : r.limiters) {
      for (const FaultOutcomeReport& f : l.metrics.during_faults) {
        rows.push_back({f.fault, l.name, std::to_string(f.offered), std::to_string(f.admitted),
                        std::to_string(f.denied), std::to_string(f.unanswered)});
      }
    }
    s += Heading(kFaults) + HtmlTable(rows);
  }

  s += Heading(kPlots);
  if (!plot_error.empty()) s += "<p class=\"bad\">No plots: " + Escape(plot_error) + "</p>\n";
  for (const Plot& p : PlotScripts(r)) {
    auto it = svgs.find(p.name);
    if (it == svgs.end()) continue;
    s += "<figure id=\"plot-" + p.name + "\">\n" + InlineSvg(p.name, it->second) + "<figcaption>" +
         Escape(p.caption) + "</figcaption>\n</figure>\n";
  }

  s += Heading(kViolations) + Violations(r);

  if (r.reproduce) {
    s += Heading(kReproduce) + "<pre>" + Escape(*r.reproduce) +
         "</pre>\n<p>The same seed gives the same history hash.</p>\n";
  }
  return s + "</body>\n</html>\n";
}

}  // namespace ratelab
