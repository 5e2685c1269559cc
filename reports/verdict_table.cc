#include "reports/verdict_table.h"

#include <algorithm>
#include <cstdio>
#include <vector>

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

std::string RenderVerdictTable(const Comparison& c) {
  const std::string claim = std::to_string(c.limit) + " in any " + FormatDuration(c.window);
  bool any_unanswered = false;
  for (const LimiterOutcome& o : c.limiters) any_unanswered = any_unanswered || o.unanswered > 0;
  std::vector<std::string> header = {"limiter", "policy", "offered", "admitted", "denied"};
  if (any_unanswered) header.push_back("unanswered");
  header.push_back("max in any " + FormatDuration(c.window));
  header.push_back("/ limit");
  if (!c.limiters.empty()) {
    for (const CheckResult& check : c.limiters.front().checks) {
      header.push_back(check.name == "promise"          ? "own promise"
                       : check.name == "any-window-cap" ? claim
                                                        : check.name);
    }
  }
  std::vector<std::vector<std::string>> rows = {header};
  for (const LimiterOutcome& o : c.limiters) {
    std::vector<std::string> row = {o.name, o.policy.ToString(), std::to_string(o.offered),
                                    std::to_string(o.admitted), std::to_string(o.denied)};
    if (any_unanswered) row.push_back(std::to_string(o.unanswered));
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

std::string RenderWitnesses(const Comparison& c) {
  std::string out;
  for (const LimiterOutcome& o : c.limiters) {
    for (const CheckResult& check : o.checks) {
      if (!check.violations.empty()) out += o.name + ": " + check.violations.front().ToString();
    }
  }
  return out;
}

}  // namespace ratelab
