// The admin rules API: off without a store and a token, read-only on a file, and creating,
// listing, replacing and deleting rules in PostgreSQL.
#include <gtest/gtest.h>

#include "impl/rules/postgres_rules.h"
#include "impl/service/service_test_util.h"
#include "testing/postgres.h"

namespace ratelab {
namespace {

using service_testing::Body;
using service_testing::Fixture;
using service_testing::kToken;

TEST(AdminApi, IsOffWithoutAStoreAndATokenAndRefusesCallersWithoutTheToken) {
  Fixture off({});
  const HttpResponse r = off.Send("GET", "/ratelimit/rules", "");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Body(r)["error"],
            "the admin API is off: the service was given no rules store and token (ratelab serve "
            "--admin-token-file)");
  ReadOnlyRules file(SeedServiceRules(), "rules.yaml");
  Fixture f({}, AdminApi{&file, kToken, {}});
  const HttpResponse none = f.Send("GET", "/ratelimit/rules", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.Header("WWW-Authenticate"), "Bearer");
  f.headers = {{"Authorization", "Bearer s3cret-tokeN"}};
  EXPECT_EQ(f.Send("GET", "/ratelimit/rules", "").status, 403);
  f.headers = {{"authorization", std::string("Bearer ") + kToken}};
  const HttpResponse listed = f.Send("GET", "/ratelimit/rules", "");
  EXPECT_EQ(listed.status, 200);
  EXPECT_EQ(Body(listed)["rules"].size(), 2u);
  // A file is read, never written.
  const HttpResponse write =
      f.Send("DELETE", "/ratelimit/rules/" + file.List()->rules()[0].rule_id, "");
  EXPECT_EQ(write.status, 405);
  EXPECT_EQ(write.Header("Allow"), "GET");
  EXPECT_NE(std::string(Body(write)["error"]).find("the rules come from rules.yaml"),
            std::string::npos);
}

TEST(AdminApi, CreatesListsReplacesAndDeletesRulesInPostgresql) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  Result<std::unique_ptr<PostgresRules>> store = PostgresRules::Open(server->conninfo());
  ASSERT_TRUE(store.ok()) << store.status();
  Fixture f({}, AdminApi{store->get(), kToken, {}});
  f.headers = {{"Authorization", std::string("Bearer ") + kToken}};

  const std::string search =
      R"({"scope_type": "user", "endpoint": "/api/search", "algorithm": "sliding-log",
          "max_requests": 100, "window_seconds": 60})";
  HttpResponse made = f.Send("POST", "/ratelimit/rules", search);
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string id = Body(made)["rule_id"];
  EXPECT_EQ(id, DerivedRuleId(ScopeType::kUser, "*", "/api/search"));
  EXPECT_EQ(made.Header("Location"), "/ratelimit/rules/" + id);
  EXPECT_EQ(f.Send("POST", "/ratelimit/rules", search).status, 409) << "the same target again";
  const HttpResponse bucket =
      f.Send("POST", "/ratelimit/rules",
             R"({"scope_type": "apiKey", "scope_value": "k1", "endpoint": "/api/*",
          "algorithm": "token-bucket", "max_requests": 10, "window_seconds": 1, "burst_size": 50})");
  ASSERT_EQ(bucket.status, 201) << bucket.body;

  EXPECT_EQ(Body(f.Send("GET", "/ratelimit/rules", ""))["rules"].size(), 2u);
  const HttpResponse filtered =
      f.Send("GET", "/ratelimit/rules?scope_type=apiKey&endpoint=%2Fapi%2F*", "");
  ASSERT_EQ(filtered.status, 200);
  ASSERT_EQ(Body(filtered)["rules"].size(), 1u);
  EXPECT_EQ(Body(filtered)["rules"][0]["burst_size"], 50);
  EXPECT_EQ(Body(f.Send("GET", "/ratelimit/rules?team=x", ""))["error"],
            "unknown filter 'team' (expected scope_type, scope_value, endpoint or algorithm)");

  const HttpResponse got = f.Send("GET", "/ratelimit/rules/" + id, "");
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(
      got.body,
      R"({"rule_id":")" + id +
          R"(","scope_type":"user","scope_value":"*","endpoint":"/api/search","algorithm":"sliding-log","max_requests":100,"window_seconds":60})");
  const HttpResponse replaced =
      f.Send("PUT", "/ratelimit/rules/" + id,
             R"({"scope_type": "user", "endpoint": "/api/search", "algorithm": "sliding-log",
          "max_requests": 10, "window_seconds": 60})");
  EXPECT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ((*store)->List()->Find(id)->max_requests, 10);

  // Bad bodies and ids.
  const std::pair<std::string, std::string> bad[] = {
      {R"({"scope_type": "user", "algorithm": "token-bucket", "max_requests": 10,
           "window_seconds": 1})",
       "burst_size: is missing: a token-bucket rule needs a burst_size, how many requests it "
       "admits at once"},
      {R"({"scope_type": "user", "algorithm": "gcra", "max_requests": "ten",
           "window_seconds": 1, "burst_size": 1})",
       "max_requests: expected an integer, found a string"},
      {R"({"scope_type": "team", "algorithm": "gcra"})",
       "scope_type: 'team' is not a scope type; expected user, org, ip, apiKey or global"},
      {R"({"scope_type": "user", "window": 5})",
       "window: not a field of a rule (expected rule_id, scope_type, scope_value, endpoint, "
       "algorithm, max_requests, window_seconds, burst_size)"},
      {"[]", "the body is an array; expected a rule (docs/rules.md)"},
  };
  for (const auto& [body, error] : bad) {
    const HttpResponse r = f.Send("POST", "/ratelimit/rules", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(Body(r)["error"], error);
  }
  EXPECT_EQ(f.Send("PUT", "/ratelimit/rules/" + id, R"({"rule_id": "x"})").status, 400);
  const std::string unknown = "00000000-0000-4000-8000-000000000000";
  EXPECT_EQ(f.Send("GET", "/ratelimit/rules/" + unknown, "").status, 404);
  EXPECT_EQ(f.Send("PUT", "/ratelimit/rules/" + unknown, search).status, 404);
  EXPECT_EQ(f.Send("DELETE", "/ratelimit/rules/" + unknown, "").status, 404);
  EXPECT_EQ(f.Send("DELETE", "/ratelimit/rules/not-a-uuid", "").status, 400);

  const HttpResponse gone = f.Send("DELETE", "/ratelimit/rules/" + id, "");
  EXPECT_EQ(gone.status, 204);
  EXPECT_EQ(gone.body, "");
  EXPECT_EQ((*store)->List()->rules().size(), 1u);
}

}  // namespace
}  // namespace ratelab
