// The service's answers, decided by rules through an in-process protocol on an inline executor.
#include "impl/service/service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "impl/limiters/protocol.h"

namespace ratelab {
namespace {

using std::chrono::seconds;

constexpr Instant kMidnight = FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000);  // 00:00:00

Rule MakeRule(ScopeType type, std::string endpoint, Algorithm algorithm, int64_t max,
              int64_t window_seconds, std::optional<int64_t> burst = std::nullopt) {
  Rule r;
  r.scope_type = type;
  r.endpoint = std::move(endpoint);
  r.algorithm = algorithm;
  r.max_requests = max;
  r.window_seconds = window_seconds;
  r.burst_size = burst;
  r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
  return r;
}

struct Fixture {
  RuleSet rules;
  Stores stores;
  RulesLimiter limiter{[this]() -> const RuleSet& { return rules; },
                       [this](const Rule& rule) {
                         const Policy p = rule.ToPolicy();
                         return MakeProtocol("memory-" + std::string(Describe(p.algorithm).name), p,
                                             stores);
                       }};
  RateLimitService service{limiter};
  InlineExecutor executor;
  Context ctx{executor};

  explicit Fixture(std::vector<Rule> r) : rules(*RuleSet::Make(std::move(r))) {}

  HttpResponse Send(std::string method, std::string path, std::string body,
                    Instant now = kMidnight) {
    const HttpRequest request{std::move(method), std::move(path), {}, std::move(body)};
    return RunInline(service.Handle(ctx, request, now));
  }
};

nlohmann::json Body(const HttpResponse& r) { return nlohmann::json::parse(r.body); }

TEST(RateLimitService, Seed003sDecisionApiAnswersAsTheSeedShows) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/messages", Algorithm::kFixedWindow, 2, 60)});
  const std::string ask = R"({"user_id": "u_42", "endpoint": "/api/messages", "scope": "user"})";
  HttpResponse r = f.Send("POST", "/ratelimit/check", ask, kMidnight + seconds(37));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"allowed":true,"remaining":1,"limit":2,"reset":1767225660})");
  EXPECT_EQ(r.Header("content-type"), "application/json");
  EXPECT_EQ(r.Header("X-RateLimit-Remaining"), "1");
  f.Send("POST", "/ratelimit/check", ask, kMidnight + seconds(37));
  r = f.Send("POST", "/ratelimit/check", ask, kMidnight + seconds(37));
  EXPECT_EQ(r.status, 429);
  EXPECT_EQ(r.body, R"({"allowed":false,"remaining":0,"limit":2,"retry_after":23})");
  EXPECT_EQ(r.Header("Retry-After"), "23");
  // Another user, another counter; an endpoint no rule limits, no headers.
  EXPECT_EQ(f.Send("POST", "/ratelimit/check", R"({"user_id": "u_7", "endpoint": "/api/messages"})")
                .status,
            200);
  r = f.Send("POST", "/ratelimit/check", R"({"user_id": "u_42", "endpoint": "/other"})");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.Header("X-RateLimit-Limit").has_value());
}

TEST(RateLimitService, TwoRequestsOneTokenOnlyOneSucceeds) {
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kTokenBucket, 1, 60, 1)});
  const std::string ask = R"({"user_id": "u", "endpoint": "/pay"})";
  EXPECT_EQ(f.Send("POST", "/ratelimit/check", ask).status, 200);
  EXPECT_EQ(f.Send("POST", "/ratelimit/check", ask).status, 429);
}

TEST(RateLimitService, Seed001sHitCountsFiveAMinuteAndTheNextMinuteStartsAgain) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/hit", Algorithm::kFixedWindow, 5, 60)});
  const std::string hit = R"({"userId": "user_1"})";
  for (int i = 1; i <= 5; ++i) {
    const HttpResponse r = f.Send("POST", "/api/hit", hit, kMidnight + seconds(10));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(Body(r),
              nlohmann::json::parse(
                  R"({"userId": "user_1", "minute": "2026-01-01T00:00:00.000Z", "count": )" +
                  std::to_string(i) + R"(, "limit": 5, "status": "ok"})"));
  }
  HttpResponse sixth = f.Send("POST", "/api/hit", hit, kMidnight + seconds(10));
  EXPECT_EQ(sixth.status, 429);
  EXPECT_EQ(sixth.body, R"({"error":"Rate limit exceeded","limit":5})");
  HttpResponse next = f.Send("POST", "/api/hit", hit, kMidnight + seconds(60));
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(Body(next)["count"], 1);
  EXPECT_EQ(Body(next)["minute"], "2026-01-01T00:01:00.000Z");
}

TEST(RateLimitService, BadBodiesAreA400NamingWhatIsWrong) {
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kFixedWindow, 5, 60)});
  const std::pair<std::string, std::string> cases[] = {
      {"{not json", "the body is not JSON; expected {\"userId\": ...}"},
      {"[1]", "the body is an array; expected {\"userId\": ...}"},
      {"{}", "userId: missing"},
      {R"({"userId": 7})", "userId: expected a string, found a number"},
      {R"({"userId": ""})", "userId: empty"},
  };
  for (const auto& [body, error] : cases) {
    const HttpResponse r = f.Send("POST", "/api/hit", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(Body(r)["error"], error);
  }
  const HttpResponse scope =
      f.Send("POST", "/ratelimit/check", R"({"user_id": "u", "endpoint": "/x", "scope": "team"})");
  EXPECT_EQ(scope.status, 400);
  EXPECT_EQ(Body(scope)["error"],
            "scope_type: 'team' is not a scope type; expected user, org, ip, apiKey or global");
}

TEST(RateLimitService, UnknownPathsAre404AndWrongMethods405WithAllow) {
  Fixture f({});
  EXPECT_EQ(f.Send("GET", "/healthz", "").status, 200);
  const HttpResponse missing = f.Send("GET", "/nowhere", "");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Body(missing)["error"], "no such endpoint: GET /nowhere");
  const HttpResponse wrong = f.Send("GET", "/api/hit", "");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.Header("allow"), "POST");
}

}  // namespace
}  // namespace ratelab
