#include "reports/result_json.h"

#include <cinttypes>
#include <cstdio>

#include "reports/metrics.h"
#include "reports/timeline.h"

namespace ratelab {

namespace {

constexpr size_t kTopUsers = 20;

double Seconds(Instant t, Instant start) { return static_cast<double>((t - start).count()) / 1e9; }
double Millis(Duration d) { return static_cast<double>(d.count()) / 1e6; }

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json MetricsJson(const LimiterMetrics& m, const LimiterOutcome& o, Instant start) {
  nlohmann::json latency, cdf = nlohmann::json::array();
  if (!m.latency_cdf.empty()) {
    latency = {{"p50", Millis(m.latency_cdf[50])},
               {"p95", Millis(m.latency_cdf[95])},
               {"p99", Millis(m.latency_cdf[99])},
               {"max", Millis(m.latency_cdf[100])}};
    for (Duration d : m.latency_cdf) cdf.push_back(Millis(d));
  }
  nlohmann::json faults = nlohmann::json::array();
  for (const FaultOutcome& f : m.during_faults) {
    faults.push_back({{"fault", f.fault},
                      {"from_s", Seconds(f.from, start)},
                      {"to_s", Seconds(f.to, start)},
                      {"offered", f.offered},
                      {"admitted", f.admitted},
                      {"denied", f.denied},
                      {"unanswered", f.unanswered}});
  }
  return {{"over_admitted", m.over_admitted},
          {"false_denials", m.false_denials},
          {"burst_ratio", m.burst_ratio},
          {"fairness", Optional(m.fairness)},
          {"contended_users", m.contended_users},
          {"state_keys", o.state.keys},
          {"state_bytes", o.state.bytes},
          {"state_bytes_per_key", Optional(m.state_bytes_per_key)},
          {"steps_per_decision", m.steps_per_decision},
          {"latency_ms", latency},
          {"latency_cdf_ms", cdf},
          {"during_faults", faults}};
}

nlohmann::json SeriesJson(const TimeSeries& s) {
  return {{"offered", s.offered},
          {"admitted", s.admitted},
          {"denied", s.denied},
          {"unanswered", s.unanswered},
          {"peak_in_window", s.peak_in_window}};
}

}  // namespace

std::string HexHash(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

nlohmann::json ResultJson(const Comparison& c) {
  const Bins bins = ChooseBins(c);
  nlohmann::json limiters = nlohmann::json::array();
  for (const LimiterOutcome& o : c.limiters) {
    nlohmann::json violations = nlohmann::json::array();
    nlohmann::json checks = nlohmann::json::array();
    for (const CheckResult& check : o.checks) {
      checks.push_back({{"name", check.name}, {"violations", check.violations.size()}});
      for (const Violation& v : check.violations) {
        violations.push_back({{"check", check.name},
                              {"invariant", v.invariant},
                              {"key", v.key},
                              {"summary", v.summary},
                              {"witness", WitnessJson(v.witness, c.start)}});
      }
    }
    limiters.push_back({{"name", o.name},
                        {"protocol", o.protocol},
                        {"policy", o.policy.ToString()},
                        {"offered", o.offered},
                        {"admitted", o.admitted},
                        {"denied", o.denied},
                        {"unanswered", o.unanswered},
                        {"max_in_any_window", o.max_in_any_window},
                        {"history_hash", HexHash(o.history_hash)},
                        {"metrics", MetricsJson(ComputeMetrics(c, o), o, c.start)},
                        {"series", SeriesJson(ComputeSeries(c, o, bins))},
                        {"checks", checks},
                        {"violations", violations}});
  }
  const nlohmann::json faults = FaultsJson(c.faults, c.start);
  nlohmann::json users = nlohmann::json::array();
  for (const UserShare& u : TopUsers(c, kTopUsers)) {
    users.push_back({{"key", u.key}, {"offered", u.offered}, {"admitted", u.admitted}});
  }
  return {
      {"scenario", c.scenario},
      {"description", c.description},
      {"seed", c.seed},
      {"history_hash", HexHash(c.history_hash())},
      {"buggify", c.buggify},
      {"claim",
       {{"limit", c.limit}, {"window", FormatDuration(c.window)}, {"window_ms", Millis(c.window)}}},
      {"traffic", c.traffic},
      {"faults", faults},
      {"notes", c.notes},
      {"bins",
       {{"width", FormatDuration(bins.width)},
        {"width_ms", Millis(bins.width)},
        {"count", bins.count}}},
      {"users", users},
      {"limiters", limiters}};
}

}  // namespace ratelab
