// A run as data: the JSON that `ratelab run --out DIR` writes to DIR/result.json and `--json`
// prints. Every number the views show is in it.
#ifndef RATELAB_REPORTS_RESULT_JSON_H_
#define RATELAB_REPORTS_RESULT_JSON_H_

#include <nlohmann/json.hpp>

#include "sim/scenario_run.h"

namespace ratelab {

// {"scenario", "seed", "history_hash" (16 hex digits), "buggify", "claim": {"limit", "window"},
//  "traffic": [...], "limiters": [{"protocol", "policy", "offered", "admitted", "denied",
//  "unanswered", "max_in_any_window", "history_hash", "violations": [{"invariant", "key",
//  "summary", "witness": [{"id", "key", "node", "cost", "at", "outcome"}]}]}]}
nlohmann::json ResultJson(const Comparison& c);

std::string HexHash(uint64_t h);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_RESULT_JSON_H_
