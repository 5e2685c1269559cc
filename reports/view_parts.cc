#include "reports/view_parts.h"

#include <cstdio>

#include "reports/timeline.h"

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

std::string Listed(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  }
  return s;
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

std::string JunitDocument(const std::string& suite, const std::vector<JunitCase>& cases,
                          double seconds) {
  int64_t failures = 0, errors = 0;
  std::string body;
  for (const JunitCase& c : cases) {
    body += "    <testcase classname=\"" + Escape(c.classname) + "\" name=\"" + Escape(c.name) +
            "\" time=\"" + Fixed(c.seconds, 3) + "\"";
    if (c.failure.empty() && c.message.empty()) {
      body += "/>\n";
      continue;
    }
    (c.error ? errors : failures) += 1;
    body += std::string(">\n      <") + (c.error ? "error" : "failure") + " type=\"" +
            Escape(c.name) + "\" message=\"" + Escape(c.message) + "\">" + Escape(c.failure) +
            "</" + (c.error ? "error" : "failure") + ">\n    </testcase>\n";
  }
  const std::string counts = " tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\"";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"ratelab\"" + counts +
         " time=\"" + Fixed(seconds, 3) + "\">\n  <testsuite name=\"" + Escape(suite) + "\"" +
         counts + " skipped=\"0\" time=\"" + Fixed(seconds, 3) + "\">\n" + body +
         "  </testsuite>\n</testsuites>\n";
}

std::string WitnessText(const ViolationReport& v, const std::vector<FaultReport>& faults) {
  std::string body = v.invariant + " on key " + v.key + "\n";
  for (const TimelineRow& row : WitnessTimeline(v.witness, faults)) {
    body += Fixed(row.at_s, 6) + "s  " +
            (row.id < 0 ? std::string() : "#" + std::to_string(row.id) + "  " + row.node + "  ") +
            row.what + "\n";
  }
  return body;
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
