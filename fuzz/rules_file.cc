// The rules file (sim/rules_file.h): any text is read as rules or refused with an error, and the
// rules read are written back (RulesYaml) as a file that reads back equal and are matched.
#include "sim/rules_file.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const ratelab::Result<ratelab::RuleSet> rules = ratelab::ParseRules(text, "fuzz.yaml");
  if (!rules.ok()) {
    if (rules.status().message().empty()) __builtin_trap();  // an error must say what is wrong
    return 0;
  }
  const ratelab::Result<ratelab::RuleSet> again =
      ratelab::ParseRules(ratelab::RulesYaml(*rules), "written.yaml");
  if (!again.ok()) __builtin_trap();
  // The same rules, in the order RulesYaml writes them.
  if (again->rules().size() != rules->rules().size()) __builtin_trap();
  for (const ratelab::Rule& r : rules->rules()) {
    const ratelab::Rule* back = again->Find(r.rule_id);
    if (back == nullptr || !(*back == r)) __builtin_trap();
    // Every rule matches a request of its own target.
    const ratelab::Scope scope{r.scope_type, r.scope_value == "*" ? "someone" : r.scope_value};
    const std::string endpoint =
        r.endpoint == "*"
            ? "/any"
            : (r.endpoint.back() == '*' ? r.endpoint.substr(0, r.endpoint.size() - 1) + "x"
                                        : r.endpoint);
    if (rules->Match({&scope, 1}, endpoint).empty()) __builtin_trap();
  }
  return 0;
}
