// The rules file (docs/rules.md): rate-limit rules in YAML, the embedded store that needs no
// server. The same fields as the rules table (impl/rules/rules.h), the same validation, every
// error located at the field:
//
//   rules:
//     - scope_type: user          # user, org, ip, apiKey or global
//       scope_value: "*"          # a value, or * for each value on its own (the default)
//       endpoint: /api/search     # exact, a wildcard such as /api/*, or * (the default)
//       algorithm: sliding-log    # any of `ratelab list algorithms`
//       max_requests: 100
//       window_seconds: 60
//       burst_size: 10            # bucket algorithms only, and required by them
//       rule_id: 7c9e6679-...     # optional: derived from scope_type, scope_value and endpoint
#ifndef RATELAB_SIM_RULES_FILE_H_
#define RATELAB_SIM_RULES_FILE_H_

#include <string>

#include "impl/core/status.h"
#include "impl/rules/rules.h"

namespace ratelab {

// Reads the rules file at `path`. Errors read "FILE:LINE:COLUMN: what is wrong".
Result<RuleSet> LoadRules(const std::string& path);
// The same from text; `source` names it in errors.
Result<RuleSet> ParseRules(const std::string& text, const std::string& source);
// The rules as a rules file (every field written, rule_id included), in SortRules order, which
// ParseRules reads back equal.
std::string RulesYaml(const RuleSet& rules);

}  // namespace ratelab

#endif  // RATELAB_SIM_RULES_FILE_H_
