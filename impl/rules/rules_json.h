// A rule as JSON (the admin API's bodies): the fields of kRuleFields, named as in the rules table
// and the rules file; burst_size only when the rule has one.
#ifndef RATELAB_IMPL_RULES_RULES_JSON_H_
#define RATELAB_IMPL_RULES_RULES_JSON_H_

#include <nlohmann/json.hpp>

#include "impl/core/status.h"
#include "impl/rules/rules.h"

namespace ratelab {

nlohmann::ordered_json RuleToJson(const Rule& rule);

// What a JSON value is, for an error: "a string", "an integer", "a fraction", "null", ...
std::string_view JsonTypeName(const nlohmann::json& value);

// A rule from a JSON object: InvalidArgument naming the field at fault ("max_requests: expected
// an integer, found a string", "window_seconds: must be between 1 and ..."), an unknown field
// included. Without a rule_id, the one derived from its target (DerivedRuleId).
Result<Rule> RuleFromJson(const nlohmann::json& object);

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_RULES_JSON_H_
