#include "reports/verdict_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "reports/run_report.h"
#include "reports/view_parts.h"

namespace ratelab {

namespace {

// Left-aligns the first column and right-aligns the rest, two spaces apart.
std::string Align(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += i <= 1 ? row[i] + pad : pad + row[i];
      if (i + 1 < row.size()) line += "  ";
    }
    out += line + "\n";
  }
  return out;
}

std::string Ratio(int64_t n, int64_t d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(n) / static_cast<double>(d));
  return buf;
}

}  // namespace

std::string RenderVerdictTable(const RunResult& c) {
  const std::string claim = std::to_string(c.limit) + " in any " + FormatDuration(c.window);
  bool any_unanswered = false, any_failed = false;
  for (const LimiterOutcome& o : c.limiters) {
    any_unanswered = any_unanswered || o.unanswered > 0;
    any_failed = any_failed || o.failed > 0;
  }
  std::vector<std::string> header = {"limiter", "policy", "offered", "admitted", "denied"};
  if (any_unanswered) header.push_back("unanswered");
  if (any_failed) header.push_back("FAILED");
  header.push_back("max in any " + FormatDuration(c.window));
  header.push_back("/ limit");
  if (!c.limiters.empty()) {
    for (const CheckResult& check : c.limiters.front().checks) {
      header.push_back(check.check == CheckId::kPromise        ? "own promise"
                       : check.check == CheckId::kAnyWindowCap ? claim
                                                               : std::string(check.name()));
    }
  }
  std::vector<std::vector<std::string>> rows = {header};
  for (const LimiterOutcome& o : c.limiters) {
    std::vector<std::string> row = {o.name, o.PolicyText(), std::to_string(o.offered),
                                    std::to_string(o.admitted), std::to_string(o.denied)};
    if (any_unanswered) row.push_back(std::to_string(o.unanswered));
    if (any_failed) row.push_back(std::to_string(o.failed));
    row.push_back(std::to_string(o.max_in_any_window));
    row.push_back(Ratio(o.max_in_any_window, c.limit));
    for (const CheckResult& check : o.checks) {
      const size_t n = check.violations.size();
      row.push_back(n == 0 ? "kept"
                           : "broken for " + std::to_string(n) + (n == 1 ? " key" : " keys"));
    }
    rows.push_back(std::move(row));
  }
  return Align(rows);
}

std::string RenderWitnesses(const RunResult& c) {
  std::string out;
  for (const LimiterOutcome& o : c.limiters) {
    for (const CheckResult& check : o.checks) {
      if (!check.violations.empty()) out += o.name + ": " + check.violations.front().ToString();
    }
  }
  return out;
}

std::string RenderRunText(const RunResult& c, const std::string& reproduce) {
  std::string out = "scenario " + c.scenario + ", seed " + std::to_string(c.seed) + ", history " +
                    HexHash(c.history_hash()) + (c.buggify ? ", BUGGIFY on" : "") + "\n";
  for (const FaultWindow& fault : c.faults) out += "fault: " + fault.what + "\n";
  out += "\n" + RenderVerdictTable(c);
  for (const LimiterOutcome& o : c.limiters) {
    if (o.unanswered > 0) {
      out += "\n" + o.name + ": " + std::to_string(o.unanswered) +
             " request(s) got no answer (lost in a crash, or sent while every node was down)";
    }
  }
  for (const LimiterOutcome& o : c.limiters) {
    if (const HistoryEvent* e = o.FirstFailure()) {
      out += "\n" + o.name + ": FAILED: " + std::to_string(o.failed) +
             " request(s) answered with the limiter's own error instead of a decision, so its "
             "verdicts cannot be trusted; the first: " +
             DescribeFailure(*e);
    }
  }
  for (const std::string& note : c.notes) out += "\nnote: " + note;
  const std::string witnesses = RenderWitnesses(c);
  if (!witnesses.empty()) out += "\n\nfirst witness of each violation:\n" + witnesses;
  return out + "\nreproduce: " + reproduce + "\n";
}

std::string RenderSpreadTable(const RunReport& r) {
  view_parts::Rows spread = view_parts::SpreadRows(r, true);
  const std::string same = view_parts::TakeSameColumns(spread, 2);
  return view_parts::AcrossSeedsIntro(r) + "\n\n" + Align(spread) +
         (same.empty() ? "" : "\n" + same);
}

}  // namespace ratelab
