// The admin API of RateLimitService (service.h): rules listed, read, made, replaced and deleted
// in the rules store, each call with the bearer token.
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "impl/rules/rules_json.h"
#include "impl/service/answers.h"
#include "impl/service/service.h"

namespace ratelab {

namespace {

using Json = nlohmann::ordered_json;

// The JSON object a body holds (a rule); InvalidArgument saying what it must be otherwise.
Result<nlohmann::json> BodyObject(const std::string& body, std::string_view shape) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError("the body is not JSON; expected " + std::string(shape));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("the body is " + std::string(JsonTypeName(j)) +
                                      "; expected " + std::string(shape));
  }
  return j;
}

HttpResponse NoSuchRule(std::string_view id) {
  return ErrorAnswer(404, "no rule has the id '" + std::string(id) + "'");
}

// A 409 when `rule`'s target is another rule's (or, when `new_id`, its id is taken at all).
std::optional<HttpResponse> Taken(const RuleSet& rules, const Rule& rule, bool new_id) {
  for (const Rule& r : rules.rules()) {
    if (new_id && r.rule_id == rule.rule_id) {
      return ErrorAnswer(409, "rule_id: '" + rule.rule_id + "' is taken (PUT replaces a rule)");
    }
    if (r.rule_id != rule.rule_id && r.scope_type == rule.scope_type &&
        r.scope_value == rule.scope_value && r.endpoint == rule.endpoint) {
      return ErrorAnswer(409, "the rule '" + r.rule_id + "' has the same target (" +
                                  std::string(Name(r.scope_type)) + " " + r.scope_value + " " +
                                  r.endpoint + ")");
    }
  }
  return std::nullopt;
}

// Equal secrets, compared in time that does not depend on where they differ.
bool SameSecret(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() != secret.size() ? 1 : 0;
  for (size_t i = 0; i < secret.size(); ++i) {
    diff |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  }
  return diff == 0;
}

}  // namespace

// The admin API.

std::optional<HttpResponse> RateLimitService::Unenforceable(const Rule& rule) const {
  if (!admin_.enforceable) return std::nullopt;
  const Status s = admin_.enforceable(rule);
  if (s.ok()) return std::nullopt;
  return ErrorAnswer(400, "algorithm: " + std::string(s.message()));
}

std::optional<HttpResponse> RateLimitService::Refusal(const HttpRequest& request) const {
  if (admin_.store == nullptr || admin_.token.empty()) {
    return ErrorAnswer(404,
                       "the admin API is off: the service was given no rules store and token "
                       "(ratelab serve --admin-token-file)");
  }
  const std::optional<std::string_view> auth = request.Header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (!auth || !auth->starts_with(kBearer)) {
    return ErrorAnswer(401, "the admin API needs Authorization: Bearer TOKEN",
                       {{"WWW-Authenticate", "Bearer"}});
  }
  if (!SameSecret(auth->substr(kBearer.size()), admin_.token)) {
    return ErrorAnswer(403, "the token is not the admin API's");
  }
  return std::nullopt;
}

Task<HttpResponse> RateLimitService::ListRules(Context&, const HttpRequest& request, Instant now,
                                               std::string_view) {
  Result<std::vector<QueryParam>> filters = ParseQuery(request.query);
  if (!filters.ok()) co_return BadRequest(filters.status());
  constexpr std::string_view kFilters[] = {"scope_type", "scope_value", "endpoint", "algorithm"};
  for (const QueryParam& f : *filters) {
    if (std::find(std::begin(kFilters), std::end(kFilters), f.name) == std::end(kFilters)) {
      co_return ErrorAnswer(400, "unknown filter '" + f.name +
                                     "' (expected scope_type, scope_value, endpoint or algorithm)");
    }
  }
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  Json list = Json::array();
  for (const Rule& r : rules->rules()) {
    const Json rule = RuleToJson(r);
    if (std::all_of(filters->begin(), filters->end(),
                    [&](const QueryParam& f) { return rule[f.name] == f.value; })) {
      list.push_back(rule);
    }
  }
  co_return JsonAnswer(200, Json{{"rules", list}});
}

Task<HttpResponse> RateLimitService::GetRule(Context&, const HttpRequest&, Instant now,
                                             std::string_view id) {
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  const Rule* rule = rules->Find(id);
  if (rule == nullptr) co_return NoSuchRule(id);
  co_return JsonAnswer(200, RuleToJson(*rule));
}

Task<HttpResponse> RateLimitService::CreateRule(Context&, const HttpRequest& request, Instant now,
                                                std::string_view) {
  Result<nlohmann::json> body = BodyObject(request.body, "a rule (docs/rules.md)");
  if (!body.ok()) co_return BadRequest(body.status());
  Result<Rule> rule = RuleFromJson(*body);
  if (!rule.ok()) co_return BadRequest(rule.status());
  if (std::optional<HttpResponse> refused = Unenforceable(*rule)) co_return *std::move(refused);
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  if (std::optional<HttpResponse> taken = Taken(*rules, *rule, true)) co_return *std::move(taken);
  if (Status s = admin_.store->Put(*rule); !s.ok()) co_return RulesStoreFailed(s, now);
  co_return JsonAnswer(201, RuleToJson(*rule), {{"Location", "/ratelimit/rules/" + rule->rule_id}});
}

Task<HttpResponse> RateLimitService::ReplaceRule(Context&, const HttpRequest& request, Instant now,
                                                 std::string_view id) {
  Result<nlohmann::json> body = BodyObject(request.body, "a rule (docs/rules.md)");
  if (!body.ok()) co_return BadRequest(body.status());
  if (const auto given = body->find("rule_id");
      given != body->end() && !(given->is_string() && given->get<std::string>() == id)) {
    co_return ErrorAnswer(400, "rule_id: the body's is not the path's (" + std::string(id) + ")");
  }
  (*body)["rule_id"] = std::string(id);
  Result<Rule> rule = RuleFromJson(*body);
  if (!rule.ok()) co_return BadRequest(rule.status());
  if (std::optional<HttpResponse> refused = Unenforceable(*rule)) co_return *std::move(refused);
  Result<RuleSet> rules = admin_.store->List();
  if (!rules.ok()) co_return RulesStoreFailed(rules.status(), now);
  if (rules->Find(id) == nullptr) co_return NoSuchRule(id);
  if (std::optional<HttpResponse> taken = Taken(*rules, *rule, false)) co_return *std::move(taken);
  if (Status s = admin_.store->Put(*rule); !s.ok()) co_return RulesStoreFailed(s, now);
  co_return JsonAnswer(200, RuleToJson(*rule));
}

Task<HttpResponse> RateLimitService::DeleteRule(Context&, const HttpRequest&, Instant now,
                                                std::string_view id) {
  if (Status s = admin_.store->Delete(id); !s.ok()) {
    if (s.code() == absl::StatusCode::kNotFound) co_return NoSuchRule(id);
    co_return RulesStoreFailed(s, now);
  }
  co_return HttpResponse{204, {}, ""};
}

}  // namespace ratelab
