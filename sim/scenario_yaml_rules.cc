// A scenario's `rules:` (docs/rules.md), and the limiters that enforce them.
#include "sim/internal/scenario_reader.h"
#include "sim/rules_file.h"
#include "sim/scenario.h"

namespace ratelab::internal {

Status ScenarioReader::ReadRulesSection(const YAML::Node& n, Scenario& s) const {
  if (!n.IsMap()) {
    return Error(n, "'rules' must be a mapping with 'initial' (a list of rules) or 'file'");
  }
  RL_RETURN_IF_ERROR(NoDuplicateKeys(n));
  RL_RETURN_IF_ERROR(OnlyKeys(n, "rules", {"initial", "file", "changes", "propagation"}));
  auto spec = std::make_shared<RulesSpec>();
  if (n["initial"] && n["file"]) {
    return Error(n["file"], "'rules' takes 'initial' (a list of rules) or 'file', not both");
  }
  if (n["file"]) {
    std::string file;
    RL_ASSIGN(file, StringAt(n, "file", true));
    Result<RuleSet> loaded = LoadRules(Beside(file));
    if (!loaded.ok()) return Error(n["file"], std::string(loaded.status().message()));
    spec->initial = *std::move(loaded);
  } else if (n["initial"]) {
    RL_ASSIGN(spec->initial, ReadRules(*this, n["initial"]));
  } else {
    return Error(n, "'rules' needs 'initial' (a list of rules) or 'file' (a rules file)");
  }

  if (const YAML::Node changes = n["changes"]) {
    if (!changes.IsSequence()) {
      return Error(changes, "'changes' must be a list of rules, each with its 'at'");
    }
    RuleSet current = spec->initial;
    for (const YAML::Node& c : changes) {
      RuleChange change;
      RL_ASSIGN(change.at, DurationAt(c, "at", true));
      if (change.at.count() < 0) return Error(c["at"], "a change's 'at' cannot be negative");
      if (!spec->changes.empty() && change.at < spec->changes.back().at) {
        return Error(c["at"], "the changes must be listed in the order of their 'at'");
      }
      RL_ASSIGN(change.rule, ReadRule(*this, c, {"at"}));
      Result<RuleSet> next = ApplyChange(current, change);
      if (!next.ok()) return Error(c, std::string(next.status().message()));
      current = *std::move(next);
      spec->changes.push_back(std::move(change));
    }
  }

  if (const YAML::Node p = n["propagation"]) {
    RL_RETURN_IF_ERROR(OnlyKeys(p, "propagation", {"base", "jitter"}));
    RL_ASSIGN(spec->propagation.base, DurationAt(p, "base", false, spec->propagation.base));
    RL_ASSIGN(spec->propagation.jitter, DurationAt(p, "jitter", false, spec->propagation.jitter));
    if (spec->propagation.base.count() < 0 || spec->propagation.jitter.count() < 0) {
      return Error(p, "the propagation delay cannot be negative");
    }
  }
  s.rules = std::move(spec);
  return absl::OkStatus();
}

Status ScenarioReader::ReadRulesLimiter(const YAML::Node& n, LimiterSpec& spec,
                                        const Scenario& s) const {
  for (const char* key : {"algorithm", "limit", "window", "burst", "interval", "window_offset"}) {
    if (n[key]) {
      return Error(n[key], std::string("'") + key +
                               "': in a scenario with rules, each rule sets its own policy; a "
                               "limiter gives only its protocol (or none: memory-<the rule's "
                               "algorithm>), name, durability and on_store_error");
    }
  }
  spec.by_rules = true;
  std::string protocol;
  RL_ASSIGN(protocol, StringAt(n, "protocol", false));
  if (!protocol.empty()) {
    spec.protocol = RegistryProtocol(protocol);
    if (spec.protocol == nullptr) {
      return Error(n["protocol"], std::string(CheckProtocol(protocol, Policy{}).message()));
    }
  }
  // Every rule it may enforce: the initial ones and each change.
  std::vector<Rule> rules = s.rules->initial.rules();
  for (const RuleChange& c : s.rules->changes) rules.push_back(c.rule);
  for (const Rule& rule : rules) {
    const Policy policy = rule.ToPolicy();
    if (Status problem = CheckProtocol(spec.ProtocolFor(policy), policy); !problem.ok()) {
      return Error(
          n["protocol"] ? n["protocol"] : n,
          "cannot enforce the rule '" + rule.ToString() + "': " + std::string(problem.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace ratelab::internal
