#include "reports/view_parts.h"

#include <cstdio>

namespace ratelab::view_parts {

namespace {

std::string OptionalFixed(const std::optional<double>& v, int digits) {
  return v ? Fixed(*v, digits) : "n/a";
}

}  // namespace

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string Fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string Claim(const RunReport& r) {
  return std::to_string(r.claim.limit) + " in any " + r.claim.window;
}

std::string CheckTitle(const RunReport& r, const std::string& name) {
  if (name == "promise") return "own promise";
  if (name == "any-window-cap") return "claim: " + Claim(r);
  return name;
}

std::string Verdict(uint64_t broken) {
  if (broken == 0) return "kept";
  return "broken for " + std::to_string(broken) + (broken == 1 ? " key" : " keys");
}

Rows VerdictRows(const RunReport& r) {
  std::vector<std::string> header = {"limiter",
                                     "policy",
                                     "offered",
                                     "admitted",
                                     "denied",
                                     "unanswered",
                                     "max in any " + r.claim.window + " / limit",
                                     "over-admitted",
                                     "false denials"};
  if (!r.limiters.empty()) {
    for (const CheckCount& c : r.limiters[0].checks) header.push_back(CheckTitle(r, c.name));
  }
  Rows rows = {header};
  for (const LimiterReport& l : r.limiters) {
    const MetricsReport& m = l.metrics;
    std::vector<std::string> row = {
        l.name,
        l.policy,
        std::to_string(l.offered),
        std::to_string(l.admitted),
        std::to_string(l.denied),
        std::to_string(l.unanswered),
        std::to_string(l.max_in_any_window) + " (" + Fixed(m.burst_ratio, 2) + "x)",
        std::to_string(m.over_admitted),
        std::to_string(m.false_denials)};
    for (const CheckCount& c : l.checks) row.push_back(Verdict(c.violations));
    rows.push_back(std::move(row));
  }
  return rows;
}

Rows MetricRows(const RunReport& r) {
  Rows rows = {{"limiter", "fairness (Jain, contended users)", "state bytes per key",
                "keys with state", "store steps per decision", "latency p50 / p95 / p99 (ms)"}};
  for (const LimiterReport& l : r.limiters) {
    const MetricsReport& m = l.metrics;
    rows.push_back(
        {l.name, OptionalFixed(m.fairness, 3) + " (" + std::to_string(m.contended_users) + ")",
         OptionalFixed(m.state_bytes_per_key, 1), std::to_string(m.state_keys),
         Fixed(m.steps_per_decision, 2),
         !m.latency_ms ? "n/a"
                       : Fixed(m.latency_ms->p50, 3) + " / " + Fixed(m.latency_ms->p95, 3) + " / " +
                             Fixed(m.latency_ms->p99, 3)});
  }
  return rows;
}

std::vector<const ViolationReport*> ViolationsOf(const LimiterReport& limiter,
                                                 const std::string& check, size_t max) {
  std::vector<const ViolationReport*> out;
  for (const ViolationReport& v : limiter.violations) {
    if (v.check == check && (max == 0 || out.size() < max)) out.push_back(&v);
  }
  return out;
}

}  // namespace ratelab::view_parts
