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
  std::vector<std::vector<std::string>> rows = {{"limiter", "policy", "offered", "admitted",
                                                 "denied", "max in any " + FormatDuration(c.window),
                                                 "/ limit", "own promise", claim}};
  for (const LimiterOutcome& o : c.limiters) {
    rows.push_back({o.protocol, o.policy.ToString(), std::to_string(o.offered),
                    std::to_string(o.admitted), std::to_string(o.denied),
                    std::to_string(o.max_in_any_window), Ratio(o.max_in_any_window, c.limit),
                    o.promise_violations.empty()
                        ? "kept"
                        : std::to_string(o.promise_violations.size()) + " broken",
                    o.any_window_violations.empty()
                        ? "kept"
                        : "broken for " + std::to_string(o.any_window_violations.size()) +
                              (o.any_window_violations.size() == 1 ? " key" : " keys")});
  }
  return Align(rows);
}

std::string RenderWitnesses(const Comparison& c) {
  std::string out;
  for (const LimiterOutcome& o : c.limiters) {
    for (const auto* list : {&o.promise_violations, &o.any_window_violations}) {
      if (list->empty()) continue;
      out += o.protocol + ": " + list->front().ToString();
    }
  }
  return out;
}

}  // namespace ratelab
