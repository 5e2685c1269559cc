#include "sim/rules_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>

#include "sim/internal/scenario_reader.h"

namespace ratelab {

namespace internal {

namespace {

std::vector<std::string> RuleFieldNames() {
  return std::vector<std::string>(std::begin(kRuleFields), std::end(kRuleFields));
}

}  // namespace

Result<Rule> ReadRule(const YamlReader& reader, const YAML::Node& n,
                      const std::vector<std::string>& extra_keys) {
  std::vector<std::string> keys = RuleFieldNames();
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  RL_RETURN_IF_ERROR(reader.OnlyKeys(n, "a rule", keys));
  constexpr int64_t kLo = std::numeric_limits<int64_t>::min();
  constexpr int64_t kHi = std::numeric_limits<int64_t>::max();
  Rule r;
  std::string scope_type;
  RL_ASSIGN(scope_type, reader.StringAt(n, "scope_type", true));
  const std::optional<ScopeType> scope = ScopeTypeNamed(scope_type);
  if (!scope) {
    return reader.Error(n["scope_type"], "unknown scope_type '" + scope_type + "' (expected " +
                                             ScopeTypeChoices() + ")");
  }
  r.scope_type = *scope;
  RL_ASSIGN(r.scope_value, reader.StringAt(n, "scope_value", false, std::string(kAnyScopeValue),
                                           YamlReader::Controls::kAny));
  RL_ASSIGN(r.endpoint, reader.StringAt(n, "endpoint", false, "*", YamlReader::Controls::kAny));
  std::string algorithm;
  RL_ASSIGN(algorithm, reader.StringAt(n, "algorithm", true));
  const std::optional<Algorithm> a = AlgorithmNamed(algorithm);
  if (!a) {
    return reader.Error(n["algorithm"], "unknown algorithm '" + algorithm + "' (expected " +
                                            AlgorithmChoices() + ")");
  }
  r.algorithm = *a;
  RL_ASSIGN(r.max_requests, reader.IntAt(n, "max_requests", true, kLo, kHi));
  RL_ASSIGN(r.window_seconds, reader.IntAt(n, "window_seconds", true, kLo, kHi));
  if (n["burst_size"]) {
    int64_t burst = 0;
    RL_ASSIGN(burst, reader.IntAt(n, "burst_size", true, kLo, kHi));
    r.burst_size = burst;
  }
  RL_ASSIGN(r.rule_id, reader.StringAt(n, "rule_id", false,
                                       DerivedRuleId(r.scope_type, r.scope_value, r.endpoint)));
  std::transform(r.rule_id.begin(), r.rule_id.end(), r.rule_id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (std::optional<RuleProblem> p = FindProblem(r)) {
    const YAML::Node field = n[std::string(p->field)];
    return reader.Error(field ? field : n, std::string(p->field) + " " + p->message);
  }
  return r;
}

Result<RuleSet> ReadRules(const YamlReader& reader, const YAML::Node& list) {
  if (!list.IsSequence()) return reader.Error(list, "'rules' must be a list of rules");
  std::vector<Rule> rules;
  for (const YAML::Node& n : list) {
    Rule r;
    RL_ASSIGN(r, ReadRule(reader, n));
    rules.push_back(std::move(r));
  }
  if (std::optional<RuleListProblem> p = FindProblem(rules)) {
    const YAML::Node rule = list[p->index];
    const YAML::Node field = rule[std::string(p->problem.field)];
    return reader.Error(field ? field : rule,
                        std::string(p->problem.field) + " " + p->problem.message);
  }
  return RuleSet::Make(std::move(rules));
}

}  // namespace internal

Result<RuleSet> ParseRules(const std::string& text, const std::string& source) {
  return internal::ParseYaml(text, source, [&](const YAML::Node& root) -> Result<RuleSet> {
    const internal::YamlReader reader(source);
    if (!root.IsMap())
      return reader.Error(root, "a rules file must be a mapping with a 'rules:' list");
    RL_RETURN_IF_ERROR(reader.NoDuplicateKeys(root));
    RL_RETURN_IF_ERROR(reader.OnlyKeys(root, "the rules file", {"rules"}));
    if (!root["rules"]) return reader.Error(root, "missing 'rules' (a list of rules)");
    return internal::ReadRules(reader, root["rules"]);
  });
}

Result<RuleSet> LoadRules(const std::string& path) {
  Result<std::string> text = internal::ReadYamlText(path, kRulesFile);
  if (!text.ok()) return text.status();
  return ParseRules(*text, path);
}

std::string RulesYaml(const RuleSet& rules) {
  std::vector<Rule> sorted = rules.rules();
  SortRules(sorted);
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "rules" << YAML::Value << YAML::BeginSeq;
  for (const Rule& r : sorted) {
    out << YAML::BeginMap;
    out << YAML::Key << "rule_id" << YAML::Value << r.rule_id;
    out << YAML::Key << "scope_type" << YAML::Value << std::string(Name(r.scope_type));
    // Quoted: a value may be *, ~, yes or anything else YAML would read as more than text.
    out << YAML::Key << "scope_value" << YAML::Value << YAML::DoubleQuoted << r.scope_value;
    out << YAML::Key << "endpoint" << YAML::Value << YAML::DoubleQuoted << r.endpoint;
    out << YAML::Key << "algorithm" << YAML::Value << std::string(AlgorithmName(r.algorithm));
    out << YAML::Key << "max_requests" << YAML::Value << r.max_requests;
    out << YAML::Key << "window_seconds" << YAML::Value << r.window_seconds;
    if (r.burst_size) out << YAML::Key << "burst_size" << YAML::Value << *r.burst_size;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace ratelab
