#include "impl/rules/rules_json.h"

#include <algorithm>

namespace ratelab {

std::string_view JsonTypeName(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::number_float:
      return "a fraction";
    default:
      return "a number";
  }
}

namespace {

Status Wrong(std::string_view field, std::string_view expected, const nlohmann::json& found) {
  return absl::InvalidArgumentError(std::string(field) + ": expected " + std::string(expected) +
                                    ", found " + std::string(JsonTypeName(found)));
}

Result<std::string> Text(const nlohmann::json& object, std::string_view field,
                         std::optional<std::string> fallback) {
  const auto it = object.find(std::string(field));
  if (it == object.end()) {
    if (fallback) return *fallback;
    return absl::InvalidArgumentError(std::string(field) + ": missing");
  }
  if (!it->is_string()) return Wrong(field, "a string", *it);
  return it->get<std::string>();
}

Result<std::optional<int64_t>> Integer(const nlohmann::json& object, std::string_view field,
                                       bool required) {
  const auto it = object.find(std::string(field));
  if (it == object.end()) {
    if (required) return absl::InvalidArgumentError(std::string(field) + ": missing");
    return std::optional<int64_t>();
  }
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return absl::InvalidArgumentError(std::string(field) + ": too large");
    }
    return std::optional<int64_t>(static_cast<int64_t>(it->get<uint64_t>()));
  }
  if (!it->is_number_integer()) return Wrong(field, "an integer", *it);
  return std::optional<int64_t>(it->get<int64_t>());
}

}  // namespace

nlohmann::ordered_json RuleToJson(const Rule& r) {
  nlohmann::ordered_json j = {{"rule_id", r.rule_id},
                              {"scope_type", Name(r.scope_type)},
                              {"scope_value", r.scope_value},
                              {"endpoint", r.endpoint},
                              {"algorithm", AlgorithmName(r.algorithm)},
                              {"max_requests", r.max_requests},
                              {"window_seconds", r.window_seconds}};
  if (r.burst_size) j["burst_size"] = *r.burst_size;
  return j;
}

Result<Rule> RuleFromJson(const nlohmann::json& object) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError("a rule must be a JSON object, not " +
                                      std::string(JsonTypeName(object)));
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find(std::begin(kRuleFields), std::end(kRuleFields), key) == std::end(kRuleFields)) {
      std::string fields;
      for (std::string_view f : kRuleFields)
        fields += (fields.empty() ? "" : ", ") + std::string(f);
      return absl::InvalidArgumentError(key + ": not a field of a rule (expected " + fields + ")");
    }
  }
  Rule r;
  Result<std::string> scope = Text(object, "scope_type", std::nullopt);
  if (!scope.ok()) return scope.status();
  const std::optional<ScopeType> type = ScopeTypeNamed(*scope);
  if (!type) {
    return absl::InvalidArgumentError("scope_type: '" + *scope +
                                      "' is not a scope type; expected " + ScopeTypeChoices());
  }
  r.scope_type = *type;
  Result<std::string> value = Text(object, "scope_value", std::string(kAnyScopeValue));
  if (!value.ok()) return value.status();
  r.scope_value = *std::move(value);
  Result<std::string> endpoint = Text(object, "endpoint", "*");
  if (!endpoint.ok()) return endpoint.status();
  r.endpoint = *std::move(endpoint);
  Result<std::string> algorithm = Text(object, "algorithm", std::nullopt);
  if (!algorithm.ok()) return algorithm.status();
  const std::optional<Algorithm> a = AlgorithmNamed(*algorithm);
  if (!a) {
    return absl::InvalidArgumentError("algorithm: '" + *algorithm +
                                      "' is not an algorithm; expected " + AlgorithmChoices());
  }
  r.algorithm = *a;
  for (auto [field, target] :
       {std::pair<std::string_view, int64_t*>{"max_requests", &r.max_requests},
        {"window_seconds", &r.window_seconds}}) {
    Result<std::optional<int64_t>> n = Integer(object, field, true);
    if (!n.ok()) return n.status();
    *target = **n;
  }
  Result<std::optional<int64_t>> burst = Integer(object, "burst_size", false);
  if (!burst.ok()) return burst.status();
  r.burst_size = *burst;
  Result<std::string> id =
      Text(object, "rule_id", DerivedRuleId(r.scope_type, r.scope_value, r.endpoint));
  if (!id.ok()) return id.status();
  r.rule_id = *std::move(id);
  std::transform(r.rule_id.begin(), r.rule_id.end(), r.rule_id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (std::optional<RuleProblem> p = FindProblem(r)) {
    return absl::InvalidArgumentError(std::string(p->field) + ": " + p->message);
  }
  return r;
}

}  // namespace ratelab
