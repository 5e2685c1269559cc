// report.md: a pull-request comment: verdicts, top findings, links to the plots.
#include "reports/advice.h"
#include "reports/view_parts.h"
#include "reports/views.h"

namespace ratelab {

std::string RenderMarkdown(const RunReport& r, const std::vector<std::string>& plots) {
  const auto cell = [](std::string v) {
    for (size_t at = v.find('|'); at != std::string::npos; at = v.find('|', at + 2)) {
      v.replace(at, 1, "\\|");
    }
    return v;
  };
  std::string s = "## ratelab: " + r.scenario + ", seed " + std::to_string(r.seed) + "\n\n";
  s += "Claim held to every limiter: **" + view_parts::Claim(r) + "** per key. History hash `" +
       r.history_hash + "`.\n\n";
  const Advice advice = Advise(r);
  for (size_t i = 0; i < advice.summary.size(); ++i) {
    s += (i == 0 ? "" : " ") + advice.summary[i];
  }
  s += "\n\n";
  for (const Pick& p : advice.picks) {
    s += "- To " + p.goal + ": **" + cell(p.limiter) + "** (" + p.because + "; " + p.but + ")\n";
  }
  if (!advice.picks.empty()) s += "\n";
  const view_parts::Rows rows = view_parts::VerdictRows(r);
  for (size_t i = 0; i < rows.size(); ++i) {
    s += "|";
    for (const std::string& c : rows[i]) s += " " + cell(c) + " |";
    s += "\n";
    if (i == 0) {
      s += "|";
      for (size_t k = 0; k < rows[0].size(); ++k) s += k < 2 ? " --- |" : " ---: |";
      s += "\n";
    }
  }
  s += "\n### Findings\n\n";
  const int64_t broken =
      view_parts::ForEachCheck(r, [&](const LimiterReport& l, const CheckCount& check) {
        if (check.violations == 0) return;
        const std::vector<const ViolationReport*> first =
            view_parts::ViolationsOf(l, check.name, 1);
        s += "- **" + cell(l.name) + "** broke *" + view_parts::CheckTitle(r, check.name) + "* (" +
             view_parts::Verdict(check.violations) + ")" +
             (first.empty() ? "" : ": " + first[0]->summary) + "\n";
      });
  int64_t failed = 0;
  for (const LimiterReport& l : r.limiters) {
    if (l.failed == 0) continue;
    ++failed;
    s += "- **" + cell(l.name) + "** FAILED: " + std::to_string(l.failed) +
         " request(s) answered with its own error; the first: " + l.failure + "\n";
  }
  if (broken == 0 && failed == 0) s += "None: every limiter kept every check.\n";
  for (const std::string& note : r.notes) s += "\n> " + note + "\n";
  if (!plots.empty()) {
    s += "\n### Plots\n\n";
    for (const std::string& p : plots) s += "- [" + p + "](plots/" + p + ".svg)\n";
  }
  s += "\nThe full report, with every witness as a timeline: `report.html`.\n";
  if (r.reproduce) s += "\nReproduce: `" + *r.reproduce + "`\n";
  return s;
}

}  // namespace ratelab
