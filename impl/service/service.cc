#include "impl/service/service.h"

#include <array>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "impl/service/headers.h"

namespace ratelab {

namespace {

using Json = nlohmann::ordered_json;

const HttpHeader kJson{"Content-Type", "application/json"};

HttpResponse JsonAnswer(int status, const Json& body, std::vector<HttpHeader> headers = {}) {
  headers.insert(headers.begin(), kJson);
  return HttpResponse{status, std::move(headers), body.dump()};
}

HttpResponse ErrorAnswer(int status, const std::string& error,
                         std::vector<HttpHeader> headers = {}) {
  return JsonAnswer(status, Json{{"error", error}}, std::move(headers));
}

// A limiter's error: the request's own fault (400), or its store's (503).
HttpResponse Failed(const Status& s) {
  if (s.code() == absl::StatusCode::kInvalidArgument) {
    return ErrorAnswer(400, std::string(s.message()));
  }
  return ErrorAnswer(503, "the store failed: " + std::string(s.message()));
}

std::string_view TypeName(const nlohmann::json& j) {
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
    default:
      return "a number";
  }
}

// The JSON object a body holds; InvalidArgument saying what it must be otherwise.
Result<nlohmann::json> BodyObject(const std::string& body, std::string_view shape) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError("the body is not JSON; expected " + std::string(shape));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError("the body is " + std::string(TypeName(j)) + "; expected " +
                                      std::string(shape));
  }
  return j;
}

// The non-empty string field `name` of `object`, or `fallback` when it is absent and one is given.
Result<std::string> StringField(const nlohmann::json& object, const std::string& name,
                                std::optional<std::string> fallback = std::nullopt) {
  const auto it = object.find(name);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return absl::InvalidArgumentError(name + ": missing");
  }
  if (!it->is_string()) {
    return absl::InvalidArgumentError(name + ": expected a string, found " +
                                      std::string(TypeName(*it)));
  }
  std::string value = it->get<std::string>();
  if (value.empty()) return absl::InvalidArgumentError(name + ": empty");
  return value;
}

// The rate-limit headers of the rule that answered, if one did.
std::vector<HttpHeader> HeadersOf(const RulesLimiter::Answer& a, Instant now) {
  if (!a.rule) return {};
  return RateLimitHeaders(a.decision, a.rule->ToPolicy(), a.rule->rule_id, now);
}

// "2026-01-01T00:01:00.000Z": the minute `now` is in, as JavaScript's toISOString writes it.
std::string Minute(Instant now) {
  const Duration minute = std::chrono::minutes(1);
  std::string text = FormatUtc(AlignedWindowStart(AlignedWindowIndex(now, minute), minute));
  if (text.find('.') == std::string::npos && !text.empty() && text.back() == 'Z') {
    text.insert(text.size() - 1, ".000");
  }
  return text;
}

}  // namespace

RuleSet SeedServiceRules() {
  const auto rule = [](std::string endpoint, Algorithm algorithm, int64_t max,
                       std::optional<int64_t> burst) {
    Rule r;
    r.scope_type = ScopeType::kUser;
    r.endpoint = std::move(endpoint);
    r.algorithm = algorithm;
    r.max_requests = max;
    r.window_seconds = 60;
    r.burst_size = burst;
    r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
    return r;
  };
  return *RuleSet::Make({rule("/api/hit", Algorithm::kFixedWindow, 5, std::nullopt),
                         rule("*", Algorithm::kTokenBucket, 100, 100)});
}

RulesLimiter::ProtocolMaker InProcessProtocols() {
  return [](const Rule& rule) {
    const Policy policy = rule.ToPolicy();
    return MakeProtocol("memory-" + std::string(Describe(policy.algorithm).name), policy, Stores{});
  };
}

const std::array<RateLimitService::Route, 3> RateLimitService::kRoutes = {{
    {"POST", "/ratelimit/check", &RateLimitService::Check},
    {"POST", "/api/hit", &RateLimitService::Hit},
    {"GET", "/healthz", &RateLimitService::Health},
}};

Task<HttpResponse> RateLimitService::Handle(Context& ctx, const HttpRequest& request, Instant now) {
  std::string allow;
  for (const Route& route : kRoutes) {
    if (route.path != request.path) continue;
    if (route.method == request.method) {
      HttpResponse r = co_await (this->*route.handle)(ctx, request, now);
      co_return r;
    }
    allow += (allow.empty() ? "" : ", ") + std::string(route.method);
  }
  if (!allow.empty()) {
    co_return ErrorAnswer(405, request.method + " " + request.path + " is not served; use " + allow,
                          {{"Allow", allow}});
  }
  co_return ErrorAnswer(404, "no such endpoint: " + request.method + " " + request.path);
}

Task<HttpResponse> RateLimitService::Check(Context& ctx, const HttpRequest& request, Instant now) {
  Result<nlohmann::json> body =
      BodyObject(request.body, R"({"user_id": ..., "endpoint": ..., "scope": ...})");
  if (!body.ok()) co_return Failed(body.status());
  Result<std::string> user = StringField(*body, "user_id");
  if (!user.ok()) co_return Failed(user.status());
  Result<std::string> endpoint = StringField(*body, "endpoint");
  if (!endpoint.ok()) co_return Failed(endpoint.status());
  Result<std::string> scope = StringField(*body, "scope", "user");
  if (!scope.ok()) co_return Failed(scope.status());
  const Request decided{*scope, *user, *endpoint, 1, now};
  Result<RulesLimiter::Answer> a = co_await limiter_.DecideByRules(ctx, decided);
  if (!a.ok()) co_return Failed(a.status());
  const Decision& d = a->decision;
  Json out;
  if (d.allowed) {
    out = Json{{"allowed", true},
               {"remaining", d.remaining},
               {"limit", d.limit},
               {"reset", ResetUnixSeconds(d, now)}};
  } else {
    out = Json{{"allowed", false}, {"remaining", 0}, {"limit", d.limit}};
    if (d.retry_after != kNever) out["retry_after"] = RetryAfterSeconds(d.retry_after);
  }
  co_return JsonAnswer(d.allowed ? 200 : 429, out, HeadersOf(*a, now));
}

Task<HttpResponse> RateLimitService::Hit(Context& ctx, const HttpRequest& request, Instant now) {
  Result<nlohmann::json> body = BodyObject(request.body, R"({"userId": ...})");
  if (!body.ok()) co_return Failed(body.status());
  Result<std::string> user = StringField(*body, "userId");
  if (!user.ok()) co_return Failed(user.status());
  const Request decided{"user", *user, "/api/hit", 1, now};
  Result<RulesLimiter::Answer> a = co_await limiter_.DecideByRules(ctx, decided);
  if (!a.ok()) co_return Failed(a.status());
  const Decision& d = a->decision;
  if (!d.allowed) {
    co_return JsonAnswer(429, Json{{"error", "Rate limit exceeded"}, {"limit", d.limit}},
                         HeadersOf(*a, now));
  }
  co_return JsonAnswer(200,
                       Json{{"userId", *user},
                            {"minute", Minute(now)},
                            {"count", d.limit - d.remaining},
                            {"limit", d.limit},
                            {"status", "ok"}},
                       HeadersOf(*a, now));
}

Task<HttpResponse> RateLimitService::Health(Context&, const HttpRequest&, Instant) {
  co_return JsonAnswer(200, Json{{"status", "ok"}});
}

}  // namespace ratelab
