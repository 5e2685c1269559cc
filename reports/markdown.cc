// report.md: a pull-request comment: the recommendation, the verdicts, the rest collapsed.
#include "reports/advice.h"
#include "reports/view_parts.h"
#include "reports/views.h"

namespace ratelab {

namespace {

// "kept", or what broke: "broke the claim (3 keys) and own promise (1 key)"; or that it failed.
std::string VerdictCell(const LimiterReport& l) {
  if (l.failed > 0) return "FAILED on " + std::to_string(l.failed) + " request(s)";
  std::vector<std::string> broke;  // the claim first
  for (const CheckCount& c : l.checks) {
    if (c.violations == 0) continue;
    view_parts::AddBroken(broke, c.check,
                          view_parts::CheckPhrase(c.check) + " (" + std::to_string(c.violations) +
                              (c.violations == 1 ? " key)" : " keys)"));
  }
  return broke.empty() ? "kept" : "broke " + view_parts::Listed(broke);
}

}  // namespace

// The verdicts first and in at most six columns, so the comment reads in a pull request's width;
// the rest collapsed. No links: a pasted comment has no files beside it.
std::string RenderMarkdown(const RunReport& r) {
  std::string s = "## " + view_parts::Title(r) + "\n\n";
  const Advice advice = Advise(r);
  if (!advice.across_seeds.empty()) s += view_parts::Sentences(advice.across_seeds) + "\n\n";
  s += view_parts::Sentences(advice.summary) + "\n\n";
  for (const Pick& p : advice.picks) {
    s += "- To " + p.goal + ": **" + view_parts::MarkdownCell(p.limiter) + "** (" + p.because +
         (p.but.empty() ? "" : "; " + p.but) + ")\n";
  }
  if (!advice.picks.empty()) s += "\n" + advice.how_picked + "\n\n";
  if (!advice.quote.empty()) s += "**" + advice.quote + "**\n\n";
  view_parts::Rows verdicts = {{"limiter", "verdict", "admitted / offered", "over-admitted",
                                "false denials", "max in any " + r.claim.window}};
  for (const LimiterReport& l : r.limiters) {
    verdicts.push_back(
        {l.name, VerdictCell(l), std::to_string(l.admitted) + " / " + std::to_string(l.offered),
         std::to_string(l.metrics.over_admitted), std::to_string(l.metrics.false_denials),
         std::to_string(l.max_in_any_window) + " (" + view_parts::Fixed(l.metrics.burst_ratio, 2) +
             "x)"});
  }
  if (r.across_seeds) {
    view_parts::Rows spread = view_parts::SpreadRows(r, false);
    const std::string same = view_parts::TakeSameColumns(spread, 2);
    s += view_parts::AcrossSeedsIntro(r) + "\n\n" + view_parts::MarkdownTable(spread, 2) +
         (same.empty() ? "" : "\n" + same + "\n") + "\n#### Seed " + std::to_string(r.seed) +
         "\n\n";
  }
  s += (r.claim.not_given
            ? view_parts::NoClaimSentence(r) + "\n\n"
            : "Every limiter held to the claim **" + view_parts::Claim(r) + "** per key:\n\n") +
       view_parts::MarkdownTable(verdicts, 2);

  s += "\n<details><summary>Details: every check, costs, findings</summary>\n\n";
  view_parts::Rows costs = view_parts::MetricRows(r);
  const std::string same_costs = view_parts::TakeSameColumns(costs, 1);
  s += view_parts::MarkdownTable(view_parts::VerdictRows(r), 2) + "\n" +
       view_parts::MarkdownTable(costs, 1) + (same_costs.empty() ? "" : "\n" + same_costs + "\n");
  s += "\n#### Findings\n\n";
  const int64_t broken = view_parts::ForEachCheck(r, [&](const LimiterReport& l,
                                                         const CheckCount& check) {
    if (check.violations == 0) return;
    const std::vector<const ViolationReport*> first = view_parts::ViolationsOf(l, check.check, 1);
    s += "- **" + view_parts::MarkdownCell(l.name) + "** broke *" +
         view_parts::CheckTitle(r, check.check) + "* (" + view_parts::Verdict(check.violations) +
         ")" + (first.empty() ? "" : ": " + first[0]->summary) + "\n";
  });
  int64_t failed = 0;
  for (const LimiterReport& l : r.limiters) {
    if (l.failed == 0) continue;
    ++failed;
    s += "- **" + view_parts::MarkdownCell(l.name) + "** FAILED: " + std::to_string(l.failed) +
         " request(s) answered with its own error; the first: " + l.failure + "\n";
  }
  if (broken == 0 && failed == 0) s += "None: every limiter kept every check.\n";
  for (const std::string& note : r.notes) s += "\n> " + note + "\n";
  s += "\nSeed " + std::to_string(r.seed) + ", history hash `" + r.history_hash + "`.\n";
  s += "\n</details>\n\nPlots and every witness as a timeline: `report.html`, beside this file.\n";
  if (r.reproduce) s += "\nReproduce: `" + *r.reproduce + "`\n";
  return s;
}

}  // namespace ratelab
