// Rate-limit rules, as the limit service keeps them in PostgreSQL and the check-then-consume helper
// writes them in code: whom a rule limits (a scope type and a value, or "*" for each value on its
// own), where (an endpoint, exact or a wildcard) and how (an algorithm, max_requests per
// window_seconds, and for a bucket its burst_size). One `Rule` type; its fields carry the same
// names in the rules table, in YAML and in JSON (kRuleFields).
//
// Validation names the field at fault. Matching follows the seeds: for each scope a request
// carries (and the global scope, which every request has), the most specific rule applies
// (an exact endpoint before a wildcard, a longer wildcard before a shorter one, a rule for the
// request's own value before one for "*"); what applies is ordered most restrictive first, and
// each applied rule keeps its own counter under the key "scope_type:scope_value:endpoint" of the
// request (impl/core/request.h, so no two requests share a key whatever their parts hold).
#ifndef RATELAB_IMPL_RULES_RULES_H_
#define RATELAB_IMPL_RULES_RULES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "impl/core/status.h"
#include "model/policy.h"

namespace ratelab {

enum class ScopeType { kUser, kOrg, kIp, kApiKey, kGlobal };

struct ScopeTypeInfo {
  ScopeType type;
  std::string_view name;  // as stored and written: "user", "org", "ip", "apiKey", "global"
  std::string_view summary;
};
// Every scope type, in a stable order.
std::span<const ScopeTypeInfo> ScopeTypes();
std::string_view Name(ScopeType type);
std::optional<ScopeType> ScopeTypeNamed(std::string_view name);
// "user, org, ip, apiKey or global", for an error.
std::string ScopeTypeChoices();

// The fields of a rule, in the order the rules table, YAML and JSON hold them.
inline constexpr std::string_view kRuleFields[] = {"rule_id",        "scope_type", "scope_value",
                                                   "endpoint",       "algorithm",  "max_requests",
                                                   "window_seconds", "burst_size"};

// A value of scope_value that stands for every value of the scope, each counted on its own.
inline constexpr std::string_view kAnyScopeValue = "*";
// The longest scope_value or endpoint a rule may hold, in bytes.
inline constexpr size_t kMaxRuleText = 1024;

struct Rule {
  std::string rule_id;  // a UUID, lowercase (DerivedRuleId when a file gives none)
  ScopeType scope_type = ScopeType::kUser;
  std::string scope_value{kAnyScopeValue};  // a value, or "*"; "*" for the global scope
  std::string endpoint = "*";  // "/api/search"; "/api/*" (any endpoint under /api/); "*" (any)
  Algorithm algorithm = Algorithm::kFixedWindow;
  // Window algorithms: max_requests per window_seconds. Bucket algorithms: burst_size at once,
  // refilled at max_requests per window_seconds (one token every window_seconds / max_requests).
  int64_t max_requests = 0;
  int64_t window_seconds = 0;
  std::optional<int64_t> burst_size;  // bucket algorithms only

  // The policy the rule sets. Requires !FindProblem(*this).
  Policy ToPolicy() const;
  // "user * /api/search: sliding-log 100 per 1m".
  std::string ToString() const;
  bool operator==(const Rule&) const = default;
};

struct RuleProblem {
  std::string_view field;  // one of kRuleFields
  std::string message;     // what is wrong, without the field's name
};
// What is wrong with one rule, or nothing.
std::optional<RuleProblem> FindProblem(const Rule& rule);
// What is wrong with a list of rules: a rule's own problem, or two rules with one rule_id or
// one target (scope_type, scope_value, endpoint); `index` is the later rule's.
struct RuleListProblem {
  size_t index;
  RuleProblem problem;
};
std::optional<RuleListProblem> FindProblem(std::span<const Rule> rules);

// Sorts rules as listings show them: by scope type (in ScopeTypes()'s order), scope value,
// endpoint (bytewise), then rule_id.
void SortRules(std::vector<Rule>& rules);

// True for a UUID in its canonical lowercase form, 8-4-4-4-12 hex digits.
bool IsUuid(std::string_view text);
// A name-based UUID (version 5) for a rule a file gives without a rule_id: the same target
// always gets the same id, so exporting and importing again changes nothing.
std::string DerivedRuleId(ScopeType type, std::string_view scope_value, std::string_view endpoint);

// The rule that sets `policy` for each user on every endpoint (a scenario's limiter served over
// HTTP). InvalidArgument when a rule cannot say it: a window that is not whole seconds.
Result<Rule> RuleForEveryone(const Policy& policy);

// One scope a request carries: who is asking.
struct Scope {
  ScopeType type;
  std::string value;
};

// A rule that applies to a request, and what its counter is kept under: the request's value of
// the rule's scope type ("*" for the global scope) on the request's endpoint. The views are into
// the scopes and endpoint matched, and live as long as they do.
struct AppliedRule {
  const Rule* rule;  // in the RuleSet matched against
  std::string_view scope_value;
  std::string_view endpoint;
  Policy policy;

  // "scope_type:scope_value:endpoint" (LimiterKey).
  std::string Key() const;
};

// The rule that gave a decision, as the decision's answer tells it: its id and the policy it
// set. Held in place: a copy of the rule would allocate for its id at every decision, and the
// rules may change while the decision waits on its store.
class AnsweringRule {
 public:
  // Requires IsUuid(applied.rule->rule_id), as every rule of a RuleSet's is (RuleSet::Make).
  explicit AnsweringRule(const AppliedRule& applied);
  std::string_view rule_id() const { return {id_.data(), id_.size()}; }
  const Policy& policy() const { return policy_; }

 private:
  std::array<char, 36> id_;
  Policy policy_;
};

class RuleSet {
 public:
  RuleSet() = default;
  // InvalidArgument "rules[I].FIELD: what is wrong" on the first problem (FindProblem).
  static Result<RuleSet> Make(std::vector<Rule> rules);

  // In the order given.
  const std::vector<Rule>& rules() const { return rules_; }
  const Rule* Find(std::string_view rule_id) const;

  // The rules that apply to a request from `scopes` to `endpoint`: for each of its scopes and for
  // the global scope, the most specific matching rule; most restrictive first (the lowest rate,
  // then the smallest burst or limit, then rule_id). Empty: no rule limits the request. Held in
  // place for a request of one scope (its rule and the global one: no allocation a decision).
  using Applied = absl::InlinedVector<AppliedRule, 2>;
  Applied Match(std::span<const Scope> scopes, std::string_view endpoint) const;

  bool operator==(const RuleSet&) const = default;

 private:
  explicit RuleSet(std::vector<Rule> rules) : rules_(std::move(rules)) {}
  std::vector<Rule> rules_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_RULES_H_
