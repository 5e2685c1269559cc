// Rules for tests.
#ifndef RATELAB_TESTING_RULES_H_
#define RATELAB_TESTING_RULES_H_

#include <optional>
#include <string>

#include "impl/rules/rules.h"

namespace ratelab::testing_rules {

// A rule of these fields, its id derived from its target (DerivedRuleId).
inline Rule MakeRule(ScopeType type, std::string value, std::string endpoint, Algorithm algorithm,
                     int64_t max_requests, int64_t window_seconds,
                     std::optional<int64_t> burst = std::nullopt) {
  Rule r;
  r.scope_type = type;
  r.scope_value = std::move(value);
  r.endpoint = std::move(endpoint);
  r.algorithm = algorithm;
  r.max_requests = max_requests;
  r.window_seconds = window_seconds;
  r.burst_size = burst;
  r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
  return r;
}

}  // namespace ratelab::testing_rules

#endif  // RATELAB_TESTING_RULES_H_
