#include "reports/result_json.h"

#include <cinttypes>
#include <cstdio>

namespace ratelab {

namespace {

nlohmann::json EventJson(const HistoryEvent& e) {
  std::string outcome = "no answer";
  if (e.decision) {
    outcome = e.decision->allowed
                  ? "admitted"
                  : "denied, retry after " + FormatDuration(e.decision->retry_after);
  }
  return {{"id", e.id},
          {"key", e.key},
          {"node", e.node},
          {"cost", e.cost},
          {"at", FormatInstant(e.apply)},
          {"outcome", outcome}};
}

}  // namespace

std::string HexHash(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

nlohmann::json ResultJson(const Comparison& c) {
  nlohmann::json limiters = nlohmann::json::array();
  for (const LimiterOutcome& o : c.limiters) {
    nlohmann::json violations = nlohmann::json::array();
    for (const CheckResult& check : o.checks) {
      for (const Violation& v : check.violations) {
        nlohmann::json witness = nlohmann::json::array();
        for (const HistoryEvent& e : v.witness) witness.push_back(EventJson(e));
        violations.push_back({{"invariant", v.invariant},
                              {"key", v.key},
                              {"summary", v.summary},
                              {"witness", witness}});
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
                        {"violations", violations}});
  }
  return {{"scenario", c.scenario},
          {"seed", c.seed},
          {"history_hash", HexHash(c.history_hash())},
          {"buggify", c.buggify},
          {"claim", {{"limit", c.limit}, {"window", FormatDuration(c.window)}}},
          {"traffic", c.traffic},
          {"faults", c.faults},
          {"notes", c.notes},
          {"limiters", limiters}};
}

}  // namespace ratelab
