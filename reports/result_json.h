// A run as data: the JSON that `ratelab run --out DIR` writes to DIR/result.json, `--json`
// prints, and `ratelab compare` writes as report.json. Every number the views (HTML, Markdown,
// JUnit, plots) show is in it, so `ratelab report` can rebuild them from the file alone.
#ifndef RATELAB_REPORTS_RESULT_JSON_H_
#define RATELAB_REPORTS_RESULT_JSON_H_

#include <nlohmann/json.hpp>

#include "sim/scenario_run.h"

namespace ratelab {

// Times are FormatInstant strings, or numbers of seconds since the scenario's start (fields
// ending in `_s`); durations are in milliseconds (fields ending in `_ms`).
//
// {"scenario", "description", "seed", "history_hash" (16 hex digits), "buggify",
//  "claim": {"limit", "window", "window_ms"}, "traffic": [...], "notes": [...],
//  "faults": [{"what", "from_s", "to_s"}],
//  "bins": {"width", "width_ms", "count"},
//  "users": [{"key", "offered", "admitted": [per limiter]}]  (the busiest 20),
//  "limiters": [{"name", "protocol", "policy", "offered", "admitted", "denied", "unanswered",
//    "max_in_any_window", "history_hash",
//    "metrics": {"over_admitted", "false_denials", "burst_ratio", "fairness" (or null),
//      "contended_users", "state_keys", "state_bytes", "state_bytes_per_key" (or null),
//      "steps_per_decision", "latency_ms": {"p50", "p95", "p99", "max"} (or null),
//      "latency_cdf_ms": [101 percentiles], "during_faults": [{"fault", "from_s", "to_s",
//      "offered", "admitted", "denied", "unanswered"}]},
//    "series": {"offered", "admitted", "denied", "unanswered", "peak_in_window"} (per bin),
//    "checks": [{"name", "violations"}],
//    "violations": [{"check", "invariant", "key", "summary", "witness": [{"id", "key", "node",
//    "cost",
//      "at", "outcome", "invoke_s", "complete_s" (or null), "steps": [{"label", "at_s"}]}]}]}]}
nlohmann::json ResultJson(const Comparison& c);

std::string HexHash(uint64_t h);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_RESULT_JSON_H_
