// The service's answers, decided by rules through an in-process protocol on an inline executor.
#include "impl/service/service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "impl/limiters/protocol.h"
#include "impl/service/service_protocol.h"
#include "impl/service/service_test_util.h"
#include "impl/store/memory_kv.h"
#include "testing/rules.h"

namespace ratelab {
namespace {

using service_testing::Body;
using service_testing::Fixture;
using service_testing::kMidnight;
using service_testing::kToken;
using service_testing::MakeRule;
using std::chrono::seconds;

TEST(RateLimitService, TheDecisionApiAnswersAsTheLimitServiceShows) {
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

// An answer given back once it is written out (as serve gives each one back) lends its memory to
// the next decision's answer: the decision is answered with no allocation, and says the same.
TEST(RateLimitService, ADecisionIsAnsweredInTheRoomOfAnAnswerGivenBack) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/messages", Algorithm::kFixedWindow, 2, 60)});
  const std::string ask = R"({"user_id": "u_42", "endpoint": "/api/messages"})";
  HttpResponse written = f.Send("POST", "/ratelimit/check", ask, kMidnight + seconds(37));
  const size_t first_headers = written.headers.size();
  written.body.reserve(1000);  // more than any answer of its own would have
  written.headers.reserve(50);
  const char* const body_room = written.body.data();
  const AnswerHeader* const headers_room = written.headers.data();
  f.service->Reuse(std::move(written));
  HttpResponse r = f.Send("POST", "/ratelimit/check", ask, kMidnight + seconds(37));
  EXPECT_EQ(r.body.data(), body_room);
  EXPECT_GE(r.body.capacity(), 1000u);
  EXPECT_EQ(r.headers.data(), headers_room);
  EXPECT_GE(r.headers.capacity(), 50u);
  EXPECT_EQ(r.body, R"({"allowed":true,"remaining":0,"limit":2,"reset":1767225660})");
  EXPECT_EQ(r.Header("X-RateLimit-Remaining"), "0");
  EXPECT_EQ(r.headers.size(), first_headers) << "nothing of the answer given back is left";
  // The same through the gateway's check, whose answer has no body: a denial, in the room of the
  // last answer.
  f.service->Reuse(std::move(r));
  f.headers = {{"X-User-Id", "u_42"}, {"X-Original-URI", "/api/messages"}};
  const HttpResponse denied = f.Send("GET", "/ratelimit/auth", "", kMidnight + seconds(37));
  EXPECT_EQ(denied.status, 429);
  EXPECT_EQ(denied.headers.data(), headers_room);
  EXPECT_GE(denied.headers.capacity(), 50u);
  EXPECT_EQ(denied.body, "");
  EXPECT_EQ(denied.Header("Retry-After"), "23");
  EXPECT_FALSE(denied.Header("Content-Type").has_value());
}

// A request no rule matches is not limited, and every API says so in words and in a header; it
// never reads as "limit 0", which a client would take for blocked.
TEST(RateLimitService, ARequestNoRuleMatchesSaysItIsNotLimited) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/messages", Algorithm::kFixedWindow, 2, 60)});
  const auto unlimited = [](const HttpResponse& r, const std::string& api) {
    EXPECT_EQ(r.status, 200) << api;
    EXPECT_EQ(r.Header("X-RateLimit-Rule"), "none") << api;
    EXPECT_FALSE(r.Header("X-RateLimit-Limit").has_value()) << api;
    const nlohmann::json j = nlohmann::json::parse(r.body.empty() ? "{}" : r.body);
    if (r.body.empty()) return;
    EXPECT_EQ(j["limited"], false) << api << ": " << r.body;
    EXPECT_NE(j["reason"].get<std::string>().find("no rule matches"), std::string::npos) << api;
    EXPECT_FALSE(j.contains("limit")) << api << ": " << r.body;
  };
  HttpResponse r = f.Send("POST", "/ratelimit/check", R"({"user_id": "u", "endpoint": "/other"})");
  unlimited(r, "the decision API");
  EXPECT_EQ(nlohmann::json::parse(r.body)["allowed"], true);
  r = f.Send("POST", "/api/hit", R"({"userId": "u"})", kMidnight + seconds(10));
  unlimited(r, "the hit-counter API");
  EXPECT_EQ(nlohmann::json::parse(r.body)["status"], "ok");
  unlimited(f.Send("GET", "/api/usage/u", "", kMidnight + seconds(10)), "the usage API");
  // The rule's own endpoint is limited, and says by what.
  r = f.Send("POST", "/ratelimit/check", R"({"user_id": "u", "endpoint": "/api/messages"})");
  EXPECT_EQ(r.Header("X-RateLimit-Limit"), "2");
  EXPECT_FALSE(r.Header("X-RateLimit-Rule").has_value());
}

TEST(RateLimitService, TwoRequestsOneTokenOnlyOneSucceeds) {
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kTokenBucket, 1, 60, 1)});
  const std::string ask = R"({"user_id": "u", "endpoint": "/pay"})";
  EXPECT_EQ(f.Send("POST", "/ratelimit/check", ask).status, 200);
  EXPECT_EQ(f.Send("POST", "/ratelimit/check", ask).status, 429);
}

TEST(RateLimitService, TheHitCounterCountsFiveAMinuteAndTheNextMinuteStartsAgain) {
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

// GET /api/usage/ID reads the count without spending, for every in-process algorithm.
TEST(RateLimitService, TheHitCountersUsageReadsTheCountWithoutSpending) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/hit", Algorithm::kFixedWindow, 5, 60)});
  const Instant at = kMidnight + seconds(10);
  const auto usage = [&](const std::string& id) {
    return f.Send("GET", "/api/usage/" + id, "", at);
  };
  HttpResponse none = usage("user_1");
  ASSERT_EQ(none.status, 200);
  EXPECT_EQ(Body(none), nlohmann::json::parse(R"({"userId": "user_1", "minute":
      "2026-01-01T00:00:00.000Z", "count": 0, "limit": 5})"));
  for (int i = 0; i < 3; ++i) f.Send("POST", "/api/hit", R"({"userId": "user_1"})", at);
  for (int i = 0; i < 2; ++i) {
    const HttpResponse r = usage("user_1");
    EXPECT_EQ(Body(r)["count"], 3) << "read twice, spent nothing";
    EXPECT_EQ(r.Header("X-RateLimit-Remaining"), "2");
  }
  for (int i = 0; i < 3; ++i) f.Send("POST", "/api/hit", R"({"userId": "user_1"})", at);
  const HttpResponse full = usage("user_1");
  EXPECT_EQ(full.status, 200);
  EXPECT_EQ(Body(full)["count"], 5);
  EXPECT_EQ(full.Header("Retry-After"), std::nullopt) << "a read is not refused";
  // The id is percent-decoded; a bad escape is the client's fault.
  f.Send("POST", "/api/hit", R"({"userId": "a b/c"})", at);
  EXPECT_EQ(Body(usage("a%20b%2Fc"))["count"], 1);
  EXPECT_EQ(Body(usage("a%20b%2Fc"))["userId"], "a b/c");
  const HttpResponse bad = usage("x%zz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(Body(bad)["error"], "the path has a bad escape '%zz'");
  EXPECT_EQ(f.Send("GET", "/api/usage/", "").status, 404);
  EXPECT_EQ(f.Send("POST", "/api/usage/user_1", "").status, 405);
  // Every in-process algorithm can be read so.
  for (const Algorithm algorithm : {Algorithm::kSlidingLog, Algorithm::kSlidingCounter,
                                    Algorithm::kTokenBucket, Algorithm::kGcra}) {
    const bool bucket = algorithm == Algorithm::kTokenBucket || algorithm == Algorithm::kGcra;
    Fixture g({MakeRule(ScopeType::kUser, "/api/hit", algorithm, 5, 60,
                        bucket ? std::optional<int64_t>(5) : std::nullopt)});
    for (int i = 0; i < 2; ++i) g.Send("POST", "/api/hit", R"({"userId": "u"})", at);
    EXPECT_EQ(Body(g.Send("GET", "/api/usage/u", "", at))["count"], 2) << AlgorithmName(algorithm);
    EXPECT_EQ(Body(g.Send("GET", "/api/usage/u", "", at))["count"], 2) << AlgorithmName(algorithm);
  }
}

// A protocol that cannot read its count without spending is a 501 for usage, never a guess.
TEST(RateLimitService, UsageOnAProtocolThatCannotReadWithoutSpendingIs501) {
  const ManualClock clock(kMidnight);
  MemoryKv kv(clock);
  const RuleSet rules =
      *RuleSet::Make({MakeRule(ScopeType::kUser, "/api/hit", Algorithm::kTokenBucket, 5, 60, 5)});
  RulesLimiter limiter([&]() -> const RuleSet& { return rules; }, StoreProtocols(Stores{&kv}));
  RateLimitService service(limiter);
  InlineExecutor executor;
  Context ctx(executor);
  const HttpRequest read{"GET", "/api/usage/u", "", {}, ""};
  const HttpResponse r = RunInline(service.Handle(ctx, read, kMidnight));
  EXPECT_EQ(r.status, 501);
  EXPECT_EQ(Body(r)["error"],
            "the usage of u cannot be read without spending: this limiter cannot read a count "
            "without spending one");
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

TEST(RateLimitService, AGatewaysCheckTakesWhoFromHeadersAndWhereFromTheOriginalUri) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/*", Algorithm::kFixedWindow, 1, 60),
             MakeRule(ScopeType::kIp, "*", Algorithm::kFixedWindow, 2, 60)});
  f.headers = {{"X-User-Id", "alice"}, {"X-Original-URI", "/api/orders?page=2"}};
  HttpResponse r = f.Send("GET", "/ratelimit/auth", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.Header("X-RateLimit-Limit"), "1");
  EXPECT_EQ(f.Send("POST", "/ratelimit/auth", "").status, 429) << "any method";
  EXPECT_EQ(f.Send("GET", "/ratelimit/auth?deny=403", "").status, 403) << "as nginx takes it";
  EXPECT_EQ(f.Send("GET", "/ratelimit/auth?deny=500", "").status, 400);
  // No user: the address, scope ip.
  f.headers = {{"X-Real-IP", "10.0.0.1"}, {"X-Envoy-Original-Path", "/x"}};
  EXPECT_EQ(f.Send("GET", "/ratelimit/auth", "").Header("X-RateLimit-Limit"), "2");
  f.headers = {{"X-Original-URI", "/x"}};
  EXPECT_EQ(Body(f.Send("GET", "/ratelimit/auth", ""))["error"],
            "no identity: send X-User-Id, X-Api-Key or X-Real-IP");
  f.headers = {{"X-User-Id", "alice"}};
  EXPECT_EQ(Body(f.Send("GET", "/ratelimit/auth", ""))["error"],
            "no endpoint: send X-Original-URI (or X-Envoy-Original-Path)");
}

TEST(RateLimitService, MetricsCountDecisionsByOutcomeAndRuleInPrometheusText) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/hit", Algorithm::kFixedWindow, 1, 60)});
  f.Send("POST", "/api/hit", R"({"userId": "u"})");
  f.Send("POST", "/api/hit", R"({"userId": "u"})");
  f.Send("POST", "/ratelimit/check", R"({"user_id": "u", "endpoint": "/free"})");
  f.service->metrics().Took(std::chrono::microseconds(300));
  const HttpResponse r = f.Send("GET", "/metrics", "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4");
  const std::string id = DerivedRuleId(ScopeType::kUser, "*", "/api/hit");
  for (const std::string& line :
       {"ratelab_decisions_total{outcome=\"allowed\",rule=\"" + id + "\"} 1\n",
        "ratelab_decisions_total{outcome=\"denied\",rule=\"" + id + "\"} 1\n",
        std::string("ratelab_decisions_total{outcome=\"allowed\",rule=\"\"} 1\n"),
        std::string("ratelab_request_duration_seconds_bucket{le=\"0.00025\"} 0\n"),
        std::string("ratelab_request_duration_seconds_bucket{le=\"0.0005\"} 1\n"),
        std::string("ratelab_request_duration_seconds_bucket{le=\"+Inf\"} 1\n"),
        std::string("ratelab_request_duration_seconds_sum 0.0003\n"),
        std::string("ratelab_store_failures_total{kind=\"timeout\"} 0\n")}) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line << r.body;
  }
  EXPECT_EQ(r.body.find("ratelab_breaker_state"), std::string::npos) << "no breaker";
}

// Found by hand, each once a way to end `serve`: a byte that is not UTF-8 in a path, a query or
// a header reached a JSON writer that throws. Each is a 400 naming where it was, in JSON.
TEST(RateLimitService, BytesThatAreNotUtf8AreRefusedNamingWhereTheyAre) {
  ReadOnlyRules file(SeedServiceRules(), "rules.yaml");
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kFixedWindow, 5, 60)},
            AdminApi{&file, kToken, {}});
  const auto refused = [&](std::string method, std::string path, std::string body = "") {
    const HttpResponse r = f.Send(std::move(method), path, std::move(body));
    EXPECT_EQ(r.status, 400) << path;
    return std::string(Body(r)["error"]);
  };
  EXPECT_EQ(refused("GET", "/\xff"), "the path is not UTF-8");
  EXPECT_EQ(refused("GET", "/api/usage/%FF"), "the path is not UTF-8 once its escapes are decoded");
  EXPECT_EQ(refused("GET", "/api/usage/u%C3"),
            "the path is not UTF-8 once its escapes are decoded");
  f.headers = {{"X-User-Id", "alice"}, {"X-Original-URI", "/x"}};
  EXPECT_EQ(refused("GET", "/ratelimit/auth?deny=%FF"),
            "the query is not UTF-8 once its escapes are decoded");
  f.headers = {{"X-User-Id", "al\xffice"}, {"X-Original-URI", "/x"}};
  EXPECT_EQ(refused("GET", "/ratelimit/auth"), "X-User-Id: not UTF-8");
  f.headers = {{"X-Api-Key", "k"}, {"X-Original-URI", "/x\xff"}};
  EXPECT_EQ(refused("GET", "/ratelimit/auth"), "X-Original-URI is not UTF-8");
  f.headers = {{"Authorization", std::string("Bearer ") + kToken}};
  EXPECT_EQ(refused("GET", "/ratelimit/rules?scope_value=%FF"),
            "the query is not UTF-8 once its escapes are decoded");
  EXPECT_EQ(refused("GET", "/ratelimit/rules/\xfe"), "the path is not UTF-8");
  // A body's strings are JSON's, so UTF-8 already: a body that is not is not JSON.
  EXPECT_EQ(refused("POST", "/api/hit", "{\"userId\": \"\xff\"}"),
            "the body is not JSON; expected {\"userId\": ...}");
}

TEST(RateLimitService, AnIdentityLongerThanTheBoundIsA400NamingIt) {
  ServiceOptions options;
  options.max_key_bytes = 8;
  auto shared = std::make_shared<ServiceState>(FailurePolicy{}, options);
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kFixedWindow, 5, 60)}, {}, shared);
  const std::string nine = "123456789";
  const auto error = [&](const HttpResponse& r) {
    EXPECT_EQ(r.status, 400);
    return std::string(Body(r)["error"]);
  };
  EXPECT_EQ(error(f.Send("POST", "/api/hit", R"({"userId": ")" + nine + R"("})")),
            "userId: 9 bytes, more than the 8 an identity may have");
  EXPECT_EQ(error(f.Send("POST", "/ratelimit/check",
                         R"({"user_id": "u", "endpoint": "/)" + nine + R"("})")),
            "endpoint: 10 bytes, more than the 8 an identity may have");
  EXPECT_EQ(error(f.Send("GET", "/api/usage/" + nine, "")),
            "the user id in the path: 9 bytes, more than the 8 an identity may have");
  f.headers = {{"X-Real-IP", nine}, {"X-Original-URI", "/x"}};
  EXPECT_EQ(error(f.Send("GET", "/ratelimit/auth", "")),
            "X-Real-IP: 9 bytes, more than the 8 an identity may have");
  EXPECT_EQ(f.Send("POST", "/api/hit", R"({"userId": "12345678"})").status, 200) << "8 is taken";
}

// Once a limited path was refused, another spelling of it was admitted: a gateway must count
// every spelling the application behind it routes alike.
TEST(RateLimitService, AGatewayCountsEverySpellingOfALimitedPathAsOne) {
  Fixture f({MakeRule(ScopeType::kUser, "/api/search", Algorithm::kFixedWindow, 3, 60)});
  const auto ask = [&](const std::string& uri) {
    f.headers = {{"X-User-Id", "mallory"}, {"X-Original-URI", uri}};
    return f.Send("GET", "/ratelimit/auth", "").status;
  };
  for (int i = 0; i < 3; ++i) EXPECT_EQ(ask("/api/search?q=" + std::to_string(i)), 200);
  for (const std::string uri :
       {"/api/search", "/api//search", "/api/./search", "/api/%73earch", "/api/search/",
        "//api/search", "/api/x/../search", "/api/search/.", "/api/%73%65arch?x=1"}) {
    EXPECT_EQ(ask(uri), 429) << uri;
  }
  // A fragment, a segment's parameters and white space around a segment: each once admitted
  // past the limit, where the app behind routes them to the limited handler.
  for (const std::string uri :
       {"/api/search#1", "/api/search;x", "/api/search;jsessionid=AB12", "/api/search%20",
        "/api/%20search%09", "/api/search/%20", "/api/x/..;/search", "/api;a=1/search?q#f"}) {
    EXPECT_EQ(ask(uri), 429) << uri;
  }
  EXPECT_EQ(ask("/api/search%3Bx"), 200) << "an escaped semicolon is data, not parameters";
  EXPECT_EQ(ask("/api/search%2F"), 200) << "an escaped slash is another path, as the app sees it";
  EXPECT_EQ(ask("/API/search"), 200) << "case matters by default";
  EXPECT_EQ(ask("/api/%zzsearch"), 400);
  // The same through the decision API, its endpoint's query and fragment cut as a gateway's.
  for (const std::string endpoint :
       {"/api//search/", "/api/search?q=1", "/api/search#top", "/api/search;v=2"}) {
    EXPECT_EQ(f.Send("POST", "/ratelimit/check",
                     R"({"user_id": "mallory", "endpoint": ")" + endpoint + R"("})")
                  .status,
              429)
        << endpoint;
  }
}

// A path already normal is given back as it came, without being taken apart: whatever the path,
// that shortcut answers as the whole normalisation does (a segment's parameters at its end make
// the whole of it run, and change nothing else).
TEST(NormalizePath, APathAlreadyNormalIsWhatTheWholeNormalisationMakesOfIt) {
  const std::string alphabet = "/./aZ-~_%2f;x \t";
  std::mt19937_64 random(7);
  int unchanged = 0;
  for (int n = 0; n < 20'000; ++n) {
    std::string path = n % 3 == 0 ? "" : "/";
    for (uint64_t i = random() % 10; i > 0; --i) path += alphabet[random() % alphabet.size()];
    for (const PathNormalization how :
         {PathNormalization{true, false}, PathNormalization{false, false},
          PathNormalization{true, true}, PathNormalization{false, true}}) {
      const Result<std::string> quick = NormalizePath(path, how, "the path");
      const Result<std::string> whole = NormalizePath(path + ";p", how, "the path");
      ASSERT_EQ(quick.ok(), whole.ok()) << "'" << path << "'";
      if (!quick.ok()) continue;
      if (!path.starts_with('/')) continue;  // not a path: given back with its ";p"
      EXPECT_EQ(*quick, *whole) << "'" << path << "'";
      unchanged += *quick == path;
    }
  }
  EXPECT_GT(unchanged, 1'000);  // paths the shortcut gives back were among them
}

TEST(RateLimitService, CaseAndTheTrailingSlashAreTheOperatorsChoice) {
  ServiceOptions options;
  options.paths = {.case_sensitive = false, .trailing_slash_matters = true};
  auto shared = std::make_shared<ServiceState>(FailurePolicy{}, options);
  Fixture f({MakeRule(ScopeType::kUser, "/api/search", Algorithm::kFixedWindow, 1, 60)}, {},
            shared);
  const auto ask = [&](const std::string& uri) {
    f.headers = {{"X-User-Id", "mallory"}, {"X-Original-URI", uri}};
    return f.Send("GET", "/ratelimit/auth", "").status;
  };
  EXPECT_EQ(ask("/API/Search"), 200);
  EXPECT_EQ(ask("/api/search"), 429) << "one endpoint, whatever its case";
  EXPECT_EQ(ask("/api/search/"), 200) << "with its slash, another endpoint: no rule limits it";
}

// A store that fails: its address and message are the operator's, not the caller's.
class FailingProtocol final : public Protocol {
 public:
  Task<Result<Decision>> Decide(Context&, const Request&) override {
    co_return absl::UnavailableError("redis://10.0.0.5:6379/2: Connection refused");
  }
  void Restart() override {}
};

TEST(RateLimitService, AStoreFailureTellsTheCallerItsClassAndTheOperatorTheRest) {
  std::vector<std::string> log;
  auto shared = std::make_shared<ServiceState>(
      FailurePolicy{}, ServiceOptions{}, [&](std::string_view line) { log.emplace_back(line); });
  Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kFixedWindow, 5, 60)}, {}, shared,
            [](const Rule&) -> Result<std::unique_ptr<Protocol>> {
              return std::make_unique<FailingProtocol>();
            });
  for (int i = 0; i < 3; ++i) {
    const HttpResponse r =
        f.Send("POST", "/api/hit", R"({"userId": "u"})", kMidnight + std::chrono::milliseconds(i));
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.body, R"({"error":"the store failed"})");
  }
  f.Send("POST", "/api/hit", R"({"userId": "u"})", kMidnight + seconds(2));
  EXPECT_EQ(log, (std::vector<std::string>{
                     "the store failed: redis://10.0.0.5:6379/2: Connection refused",
                     "the store failed: redis://10.0.0.5:6379/2: Connection refused (and 2 more "
                     "failures in the last 2s)"}));
}

// Fails while `failing` says so, else admits.
class SometimesFailing final : public Protocol {
 public:
  explicit SometimesFailing(const bool& failing) : failing_(failing) {}
  Task<Result<Decision>> Decide(Context&, const Request& r) override {
    if (failing_) co_return absl::UnavailableError("redis://10.0.0.5:6379/2: Connection refused");
    co_return Decision{true, 4, 5, r.now, Duration(0)};
  }
  void Restart() override {}

 private:
  const bool& failing_;
};

// Liveness and readiness apart: /healthz answers while the process does; /readyz says whether the
// store answers (its class of failure only, never the store's address), and whether the breaker
// keeps requests from it.
TEST(RateLimitService, ReadinessFollowsTheStoreAndTheBreakerWhileLivenessDoesNot) {
  for (const FailurePolicy::Kind kind :
       {FailurePolicy::Kind::kError, FailurePolicy::Kind::kCircuitBreaker}) {
    bool failing = false;
    FailurePolicy policy;
    policy.kind = kind;
    policy.threshold = 2;
    auto shared = std::make_shared<ServiceState>(policy);
    Fixture f({MakeRule(ScopeType::kUser, "*", Algorithm::kFixedWindow, 5, 60)}, {}, shared,
              [&](const Rule&) -> Result<std::unique_ptr<Protocol>> {
                return std::make_unique<SometimesFailing>(failing);
              });
    const auto hit = [&] { f.Send("POST", "/api/hit", R"({"userId": "u"})", kMidnight); };
    EXPECT_EQ(f.Send("GET", "/readyz", "").status, 200);
    failing = true;
    hit();
    HttpResponse r = f.Send("GET", "/readyz", "");
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.body, R"({"status":"not ready","reason":"the store's last call failed"})");
    EXPECT_EQ(f.Send("GET", "/healthz", "").status, 200) << "alive, though not ready";
    if (kind == FailurePolicy::Kind::kCircuitBreaker) {
      hit();  // the second failure in a row opens it
      EXPECT_NE(f.Send("GET", "/readyz", "").body.find("the circuit breaker is open"),
                std::string::npos);
      continue;
    }
    failing = false;
    hit();
    EXPECT_EQ(f.Send("GET", "/readyz", "").status, 200) << "the store answers again";
  }
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

// A client reading the decision back holds the IETF fields to their grammar and to what the
// X-RateLimit headers say: a field that breaks either is an answer of an unexpected shape.
TEST(DecisionFromAnswer, TheIetfFieldsMustParseAndAgreeWithTheXHeaders) {
  const auto answer = [](std::string policy, std::string now) {
    return HttpResponse{200,
                        {{"X-RateLimit-Limit", "5"},
                         {"X-RateLimit-Remaining", "2"},
                         {"X-RateLimit-Reset", "1767225660"},
                         {"RateLimit-Policy", std::move(policy)},
                         {"RateLimit", std::move(now)}},
                        "{}"};
  };
  const Result<Decision> honest =
      DecisionFromAnswer(answer(R"("r";q=5;w=60)", R"("r";r=2;t=60)"), kMidnight);
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_EQ(honest->remaining, 2);
  const std::pair<HttpResponse, std::string> lies[] = {
      {answer(R"("r";q=5;w=60)", R"("r";r=3;t=60)"),
       "RateLimit: '\"r\";r=3;t=60' is not one policy with r=2, as X-RateLimit-Remaining says"},
      {answer(R"("r";q=50;w=60)", R"("r";r=2;t=60)"),
       "RateLimit-Policy: '\"r\";q=50;w=60' is not one policy with q=5, as X-RateLimit-Limit "
       "says"},
      {answer(R"("r";q=5;w=60)", "r=2"),
       "RateLimit: 'r=2': at byte 2: expected ',' or the end after a member"},
      {answer(R"(r;q=5)", R"("r";r=2)"),
       "RateLimit-Policy: 'r;q=5': member 1: expected a String naming a policy, found a Token"},
  };
  for (const auto& [lie, error] : lies) {
    const Result<Decision> d = DecisionFromAnswer(lie, kMidnight);
    ASSERT_FALSE(d.ok()) << error;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInternal);
    EXPECT_EQ(d.status().message(), error);
  }
}

}  // namespace
}  // namespace ratelab
