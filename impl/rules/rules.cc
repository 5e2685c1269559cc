#include "impl/rules/rules.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <numeric>
#include <tuple>

#include "impl/core/request.h"
#include "impl/core/text.h"
#include "impl/store/lua_scripting.h"

namespace ratelab {

namespace {

constexpr std::array<ScopeTypeInfo, 5> kScopeTypes = {{
    {ScopeType::kUser, "user", "a signed-in user"},
    {ScopeType::kOrg, "org", "an organisation, over all its users"},
    {ScopeType::kIp, "ip", "a client address"},
    {ScopeType::kApiKey, "apiKey", "an API key"},
    {ScopeType::kGlobal, "global", "every request: a site-wide limit (scope_value *)"},
}};

constexpr int64_t kMaxRequests = int64_t{1} << 40;
constexpr int64_t kNanosPerSecond = 1'000'000'000;
// Policy's bound on a window, 2^62 ns, in whole seconds.
constexpr int64_t kMaxWindowSeconds = (int64_t{1} << 62) / kNanosPerSecond;

RuleProblem Problem(std::string_view field, std::string message) {
  return {field, std::move(message)};
}

// How specifically `pattern` names `endpoint`, larger being more specific; nothing when it does
// not match. An exact endpoint beats every wildcard; a wildcard counts the length of its prefix.
std::optional<size_t> EndpointSpecificity(std::string_view pattern, std::string_view endpoint) {
  if (!pattern.ends_with('*')) {
    if (pattern != endpoint) return std::nullopt;
    return std::numeric_limits<size_t>::max();
  }
  const std::string_view prefix = pattern.substr(0, pattern.size() - 1);
  if (!endpoint.starts_with(prefix)) return std::nullopt;
  return prefix.size();
}

std::optional<RuleProblem> EndpointProblem(std::string_view endpoint) {
  if (endpoint.empty()) return Problem("endpoint", "is empty (use * for every endpoint)");
  if (!IsUtf8Text(endpoint)) return Problem("endpoint", "is not UTF-8 text (or holds a NUL byte)");
  if (endpoint.size() > kMaxRuleText) {
    return Problem("endpoint", "is longer than " + std::to_string(kMaxRuleText) + " bytes");
  }
  if (endpoint == "*") return std::nullopt;
  if (!endpoint.starts_with('/')) {
    return Problem("endpoint", "must start with / or be * (got '" + std::string(endpoint) + "')");
  }
  const size_t star = endpoint.find('*');
  if (star != std::string_view::npos &&
      (star + 1 != endpoint.size() || endpoint[star - 1] != '/')) {
    return Problem("endpoint", "may hold * only as its last segment, as in /api/* (got '" +
                                   std::string(endpoint) + "')");
  }
  return std::nullopt;
}

// Rates compare as max_requests / window_seconds, exactly.
bool LessRestrictive(const Rule& a, const Rule& b) {
  const Int128 rate_a = static_cast<Int128>(a.max_requests) * b.window_seconds;
  const Int128 rate_b = static_cast<Int128>(b.max_requests) * a.window_seconds;
  if (rate_a != rate_b) return rate_a > rate_b;
  const int64_t allow_a = a.burst_size.value_or(a.max_requests);
  const int64_t allow_b = b.burst_size.value_or(b.max_requests);
  if (allow_a != allow_b) return allow_a > allow_b;
  return a.rule_id > b.rule_id;
}

}  // namespace

std::span<const ScopeTypeInfo> ScopeTypes() { return kScopeTypes; }

std::string_view Name(ScopeType type) { return kScopeTypes[static_cast<size_t>(type)].name; }

std::optional<ScopeType> ScopeTypeNamed(std::string_view name) {
  for (const ScopeTypeInfo& info : kScopeTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::string ScopeTypeChoices() {
  std::string out;
  for (size_t i = 0; i < kScopeTypes.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == kScopeTypes.size() ? " or " : ", ");
    out += kScopeTypes[i].name;
  }
  return out;
}

Policy Rule::ToPolicy() const {
  if (Describe(algorithm).bucket) {
    return Policy::Bucket(algorithm, *burst_size,
                          Duration(window_seconds * kNanosPerSecond / max_requests));
  }
  return Policy::Window(algorithm, max_requests, Duration(window_seconds * kNanosPerSecond));
}

std::string Rule::ToString() const {
  std::string out = std::string(Name(scope_type)) + " " + scope_value + " " + endpoint + ": " +
                    std::string(AlgorithmName(algorithm)) + " " + std::to_string(max_requests) +
                    " per " + std::to_string(window_seconds) + "s";
  if (burst_size) out += ", burst " + std::to_string(*burst_size);
  return out;
}

std::optional<RuleProblem> FindProblem(const Rule& r) {
  if (!IsUuid(r.rule_id)) {
    return Problem("rule_id", "must be a UUID such as 7c9e6679-7425-40de-944b-e07fc1f90ae7 (got '" +
                                  r.rule_id + "')");
  }
  if (r.scope_value.empty()) {
    return Problem("scope_value", "is empty (use * for each value of the scope on its own)");
  }
  if (r.scope_value.size() > kMaxRuleText) {
    return Problem("scope_value", "is longer than " + std::to_string(kMaxRuleText) + " bytes");
  }
  if (!IsUtf8Text(r.scope_value)) {
    return Problem("scope_value", "is not UTF-8 text (or holds a NUL byte)");
  }
  if (r.scope_type == ScopeType::kGlobal && r.scope_value != kAnyScopeValue) {
    return Problem("scope_value", "must be * for the global scope, which has no values (got '" +
                                      r.scope_value + "')");
  }
  if (std::optional<RuleProblem> p = EndpointProblem(r.endpoint)) return p;
  if (r.max_requests < 1 || r.max_requests > kMaxRequests) {
    return Problem("max_requests", "must be between 1 and " + std::to_string(kMaxRequests) +
                                       " (got " + std::to_string(r.max_requests) + ")");
  }
  if (r.window_seconds < 1 || r.window_seconds > kMaxWindowSeconds) {
    return Problem("window_seconds", "must be between 1 and " + std::to_string(kMaxWindowSeconds) +
                                         " (got " + std::to_string(r.window_seconds) + ")");
  }
  const std::string algorithm(AlgorithmName(r.algorithm));
  if (!Describe(r.algorithm).bucket) {
    if (r.burst_size) {
      return Problem("burst_size",
                     "applies only to the bucket algorithms (token-bucket, gcra, "
                     "token-bucket-intervals); a " +
                         algorithm + " rule admits max_requests per window_seconds");
    }
    return std::nullopt;
  }
  if (!r.burst_size) {
    return Problem("burst_size", "is missing: a " + algorithm +
                                     " rule needs a burst_size, how many requests it admits at "
                                     "once");
  }
  if (*r.burst_size < 1 || *r.burst_size > kMaxRequests) {
    return Problem("burst_size", "must be between 1 and " + std::to_string(kMaxRequests) +
                                     " (got " + std::to_string(*r.burst_size) + ")");
  }
  if (static_cast<Int128>(r.window_seconds) * kNanosPerSecond % r.max_requests != 0) {
    return Problem("max_requests", "does not divide window_seconds into whole nanoseconds (" +
                                       std::to_string(r.window_seconds) + "s / " +
                                       std::to_string(r.max_requests) +
                                       "): a bucket gains one token every window_seconds / "
                                       "max_requests, exactly");
  }
  if (std::optional<std::string> p = r.ToPolicy().Problem()) {
    return Problem("burst_size", "and the refill rate make " + *p);
  }
  return std::nullopt;
}

std::optional<RuleListProblem> FindProblem(std::span<const Rule> rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (std::optional<RuleProblem> p = FindProblem(rules[i])) return RuleListProblem{i, *p};
    for (size_t j = 0; j < i; ++j) {
      if (rules[j].scope_type == rules[i].scope_type &&
          rules[j].scope_value == rules[i].scope_value && rules[j].endpoint == rules[i].endpoint) {
        return RuleListProblem{
            i, Problem("endpoint", "rules[" + std::to_string(j) + "] already limits " +
                                       std::string(Name(rules[i].scope_type)) + " " +
                                       rules[i].scope_value + " on " + rules[i].endpoint +
                                       " (one rule per scope, value and endpoint)")};
      }
      if (rules[j].rule_id == rules[i].rule_id) {
        return RuleListProblem{i, Problem("rule_id", "'" + rules[i].rule_id + "' is also rules[" +
                                                         std::to_string(j) + "]'s")};
      }
    }
  }
  return std::nullopt;
}

void SortRules(std::vector<Rule>& rules) {
  std::sort(rules.begin(), rules.end(), [](const Rule& a, const Rule& b) {
    return std::tie(a.scope_type, a.scope_value, a.endpoint, a.rule_id) <
           std::tie(b.scope_type, b.scope_value, b.endpoint, b.rule_id);
  });
}

AnsweringRule::AnsweringRule(const AppliedRule& applied) : id_{}, policy_(applied.policy) {
  const std::string& id = applied.rule->rule_id;
  assert(IsUuid(id));
  std::copy_n(id.begin(), std::min(id.size(), id_.size()), id_.begin());
}

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string DerivedRuleId(ScopeType type, std::string_view scope_value, std::string_view endpoint) {
  // RFC 4122 section 4.3: SHA-1 of a namespace UUID's 16 bytes and the name; ratelab's rules
  // namespace is 3c5e1a6e-2f0b-4c5e-9d1a-7b4f6a1c2e90, the name the rule's key.
  static constexpr unsigned char kNamespace[16] = {0x3c, 0x5e, 0x1a, 0x6e, 0x2f, 0x0b, 0x4c, 0x5e,
                                                   0x9d, 0x1a, 0x7b, 0x4f, 0x6a, 0x1c, 0x2e, 0x90};
  const std::string name =
      std::string(reinterpret_cast<const char*>(kNamespace), sizeof kNamespace) +
      LimiterKey(Name(type), scope_value, endpoint);
  std::string hex = Sha1Hex(name).substr(0, 32);
  hex[12] = '5';                                                    // version 5
  hex[16] = "89ab"[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];  // variant 10xx
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20, 12);
}

Result<RuleSet> RuleSet::Make(std::vector<Rule> rules) {
  if (std::optional<RuleListProblem> p = FindProblem(rules)) {
    return absl::InvalidArgumentError("rules[" + std::to_string(p->index) + "]." +
                                      std::string(p->problem.field) + ": " + p->problem.message);
  }
  return RuleSet(std::move(rules));
}

Result<Rule> RuleForEveryone(const Policy& policy) {
  Rule r;
  r.scope_type = ScopeType::kUser;
  r.algorithm = policy.algorithm;
  if (policy.IsBucket()) {
    // One token every T: k tokens in k * T, the smallest k that makes whole seconds.
    const int64_t interval = policy.window.count();
    const int64_t k = kNanosPerSecond / std::gcd(interval, kNanosPerSecond);
    if (interval > 0 && static_cast<Int128>(k) * interval / kNanosPerSecond <= kMaxWindowSeconds) {
      r.max_requests = k;
      r.window_seconds = static_cast<int64_t>(static_cast<Int128>(k) * interval / kNanosPerSecond);
    }
    r.burst_size = policy.limit;
  } else {
    r.max_requests = policy.limit;
    if (policy.window.count() % kNanosPerSecond != 0) {
      return absl::InvalidArgumentError("a rule's window is whole seconds, and " +
                                        FormatDuration(policy.window) + " is not");
    }
    r.window_seconds = policy.window.count() / kNanosPerSecond;
  }
  r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
  if (std::optional<RuleProblem> p = FindProblem(r)) {
    return absl::InvalidArgumentError("no rule says " + policy.ToString() + ": " +
                                      std::string(p->field) + " " + p->message);
  }
  return r;
}

const Rule* RuleSet::Find(std::string_view rule_id) const {
  for (const Rule& r : rules_) {
    if (r.rule_id == rule_id) return &r;
  }
  return nullptr;
}

std::string AppliedRule::Key() const {
  return LimiterKey(Name(rule->scope_type), scope_value, endpoint);
}

RuleSet::Applied RuleSet::Match(std::span<const Scope> scopes, std::string_view endpoint) const {
  Applied out;
  out.reserve(scopes.size() + 1);
  // The most specific rule for `type` and `value`, if one matches.
  const auto match = [&](ScopeType type, std::string_view value) {
    const Rule* best = nullptr;
    std::pair<size_t, bool> best_rank{};
    for (const Rule& r : rules_) {
      if (r.scope_type != type) continue;
      const bool own_value = r.scope_value == value && r.scope_value != kAnyScopeValue;
      if (!own_value && r.scope_value != kAnyScopeValue) continue;
      const std::optional<size_t> specificity = EndpointSpecificity(r.endpoint, endpoint);
      if (!specificity) continue;
      const std::pair<size_t, bool> rank{*specificity, own_value};
      if (best == nullptr || rank > best_rank) {
        best = &r;
        best_rank = rank;
      }
    }
    if (best != nullptr) out.push_back({best, value, endpoint, best->ToPolicy()});
  };
  for (const Scope& s : scopes) {
    if (s.type != ScopeType::kGlobal) match(s.type, s.value);
  }
  // The global scope, as one more scope of every request; a request naming it itself adds none.
  match(ScopeType::kGlobal, kAnyScopeValue);
  std::sort(out.begin(), out.end(), [](const AppliedRule& a, const AppliedRule& b) {
    return LessRestrictive(*b.rule, *a.rule);
  });
  return out;
}

}  // namespace ratelab
