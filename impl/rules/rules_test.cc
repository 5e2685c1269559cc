#include "impl/rules/rules.h"

#include <gtest/gtest.h>

#include "testing/rules.h"

namespace ratelab {
namespace {

Rule WindowRule(ScopeType type, std::string value, std::string endpoint, int64_t max,
                int64_t window_seconds) {
  return testing_rules::MakeRule(type, std::move(value), std::move(endpoint),
                                 Algorithm::kSlidingLog, max, window_seconds);
}

Rule Bucket(int64_t max, int64_t window_seconds, std::optional<int64_t> burst) {
  Rule r = WindowRule(ScopeType::kUser, "*", "/api/upload", max, window_seconds);
  r.algorithm = Algorithm::kTokenBucket;
  r.burst_size = burst;
  return r;
}

std::string FieldAtFault(const Rule& r) {
  const std::optional<RuleProblem> p = FindProblem(r);
  return p ? std::string(p->field) + ": " + p->message : "";
}

TEST(Rules, AValidRuleSetsItsPolicy) {
  const Rule window = WindowRule(ScopeType::kUser, "*", "/api/search", 100, 60);
  EXPECT_EQ(FieldAtFault(window), "");
  EXPECT_EQ(window.ToPolicy(),
            Policy::Window(Algorithm::kSlidingLog, 100, std::chrono::seconds(60)));
  const Rule bucket = Bucket(100, 60, 10);
  EXPECT_EQ(FieldAtFault(bucket), "");
  EXPECT_EQ(bucket.ToPolicy(),
            Policy::Bucket(Algorithm::kTokenBucket, 10, std::chrono::milliseconds(600)))
      << "burst 10, one token every 60 s / 100";
  EXPECT_EQ(bucket.ToString(), "user * /api/upload: token-bucket 100 per 60s, burst 10");
}

TEST(Rules, EachProblemNamesItsField) {
  EXPECT_TRUE(FieldAtFault(Bucket(100, 60, std::nullopt)).starts_with("burst_size: is missing"))
      << "a token bucket without a burst";
  Rule negative = WindowRule(ScopeType::kUser, "*", "/a", 5, -1);
  EXPECT_EQ(FieldAtFault(negative), "window_seconds: must be between 1 and 4611686018 (got -1)");
  Rule window_with_burst = WindowRule(ScopeType::kUser, "*", "/a", 5, 1);
  window_with_burst.burst_size = 3;
  EXPECT_TRUE(
      FieldAtFault(window_with_burst).starts_with("burst_size: applies only to the bucket"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kUser, "*", "/a", 0, 1))
                  .starts_with("max_requests: must be between 1"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kUser, "", "/a", 1, 1))
                  .starts_with("scope_value: is empty"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kGlobal, "u1", "/a", 1, 1))
                  .starts_with("scope_value: must be * for the global scope"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kUser, "*", "api", 1, 1))
                  .starts_with("endpoint: must start with / or be *"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kUser, "*", "/api*", 1, 1))
                  .starts_with("endpoint: may hold * only as its last segment"));
  EXPECT_TRUE(FieldAtFault(WindowRule(ScopeType::kUser, "*", "/a/*/b", 1, 1))
                  .starts_with("endpoint: may hold * only"));
  EXPECT_TRUE(FieldAtFault(Bucket(7, 1, 1)).starts_with("max_requests: does not divide"))
      << "1 s / 7 is not a whole number of nanoseconds";
  Rule bad_id = WindowRule(ScopeType::kUser, "*", "/a", 1, 1);
  bad_id.rule_id = "42";
  EXPECT_TRUE(FieldAtFault(bad_id).starts_with("rule_id: must be a UUID"));
  bad_id.rule_id = "7C9E6679-7425-40DE-944B-E07FC1F90AE7";
  EXPECT_TRUE(FieldAtFault(bad_id).starts_with("rule_id:")) << "lowercase, as PostgreSQL writes it";
}

TEST(Rules, ScopeValuesAndEndpointsAreUtf8TextWithoutNul) {
  const std::string not_text[] = {
      "10.\xd4\xd1"
      "0.1",
      std::string("a\0b", 3),
      "\xc0\xaf",
      "\xed\xa0\x80",
      "\xf4\x90\x80\x80",
      "cut\xe2\x82"};
  for (const std::string& value : not_text) {
    EXPECT_EQ(FieldAtFault(WindowRule(ScopeType::kUser, value, "/a", 1, 1)),
              "scope_value: is not UTF-8 text (or holds a NUL byte)");
    EXPECT_EQ(FieldAtFault(WindowRule(ScopeType::kUser, "*", "/" + value, 1, 1)),
              "endpoint: is not UTF-8 text (or holds a NUL byte)");
  }
  for (const std::string value : {"caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "a:b{c}"}) {
    EXPECT_EQ(FieldAtFault(WindowRule(ScopeType::kUser, value, "/" + value, 1, 1)), "") << value;
  }
}

TEST(Rules, ScopeTypesAreOneTable) {
  for (const ScopeTypeInfo& t : ScopeTypes()) {
    EXPECT_EQ(ScopeTypeNamed(t.name), t.type);
    EXPECT_EQ(Name(t.type), t.name);
  }
  EXPECT_EQ(ScopeTypeNamed("apikey"), std::nullopt) << "names are exact";
  EXPECT_EQ(ScopeTypeChoices(), "user, org, ip, apiKey or global");
}

TEST(Rules, DerivedIdsAreVersion5UuidsOfTheTarget) {
  const std::string id = DerivedRuleId(ScopeType::kUser, "*", "/api/search");
  EXPECT_TRUE(IsUuid(id)) << id;
  EXPECT_EQ(id[14], '5');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
  EXPECT_EQ(id, DerivedRuleId(ScopeType::kUser, "*", "/api/search"));
  EXPECT_NE(id, DerivedRuleId(ScopeType::kOrg, "*", "/api/search"));
  EXPECT_NE(DerivedRuleId(ScopeType::kUser, "a:b", "/c"),
            DerivedRuleId(ScopeType::kUser, "a", "b:/c"))
      << "the parts are escaped before hashing";
}

TEST(Rules, ARuleSetRefusesTwoRulesForOneTargetOrOneId) {
  std::vector<Rule> rules = {WindowRule(ScopeType::kUser, "*", "/a", 1, 1),
                             WindowRule(ScopeType::kUser, "*", "/b", 1, 1)};
  EXPECT_TRUE(RuleSet::Make(rules).ok());
  rules[1].endpoint = "/a";
  Result<RuleSet> same_target = RuleSet::Make(rules);
  ASSERT_FALSE(same_target.ok());
  EXPECT_EQ(same_target.status().message(),
            "rules[1].endpoint: rules[0] already limits user * on /a (one rule per scope, value "
            "and endpoint)");
  rules[1].endpoint = "/b";
  rules[1].rule_id = rules[0].rule_id;
  Result<RuleSet> same_id = RuleSet::Make(rules);
  ASSERT_FALSE(same_id.ok());
  EXPECT_TRUE(std::string(same_id.status().message()).starts_with("rules[1].rule_id: '"))
      << same_id.status();
}

std::vector<std::string> Matched(const RuleSet& set, std::vector<Scope> scopes,
                                 std::string_view endpoint) {
  std::vector<std::string> out;
  for (const AppliedRule& a : set.Match(scopes, endpoint)) {
    out.push_back(a.rule->ToString() + " @ " + a.Key());
  }
  return out;
}

TEST(Rules, ExactEndpointBeforeWildcardAndOwnValueBeforeAny) {
  Result<RuleSet> set = RuleSet::Make({
      WindowRule(ScopeType::kUser, "*", "*", 1000, 60),
      WindowRule(ScopeType::kUser, "*", "/api/*", 100, 60),
      WindowRule(ScopeType::kUser, "*", "/api/search", 10, 60),
      WindowRule(ScopeType::kUser, "vip", "/api/*", 500, 60),
  });
  ASSERT_TRUE(set.ok()) << set.status();
  const std::vector<Scope> u1 = {{ScopeType::kUser, "u1"}};
  EXPECT_EQ(
      Matched(*set, u1, "/api/search"),
      std::vector<std::string>{"user * /api/search: sliding-log 10 per 60s @ user:u1:/api/search"});
  EXPECT_EQ(
      Matched(*set, u1, "/api/messages"),
      std::vector<std::string>{"user * /api/*: sliding-log 100 per 60s @ user:u1:/api/messages"});
  EXPECT_EQ(Matched(*set, u1, "/health"),
            std::vector<std::string>{"user * *: sliding-log 1000 per 60s @ user:u1:/health"});
  const std::vector<Scope> vip = {{ScopeType::kUser, "vip"}};
  EXPECT_EQ(Matched(*set, vip, "/api/messages"),
            std::vector<std::string>{
                "user vip /api/*: sliding-log 500 per 60s @ user:vip:/api/messages"});
  EXPECT_EQ(
      Matched(*set, vip, "/api/search"),
      std::vector<std::string>{"user * /api/search: sliding-log 10 per 60s @ user:vip:/api/search"})
      << "an exact endpoint wins over the user's own wildcard";
  EXPECT_TRUE(Matched(*set, {{ScopeType::kIp, "10.0.0.1"}}, "/api/search").empty())
      << "no rule for ip, none global";
}

TEST(Rules, CompositeKeysPerDimensionMostRestrictiveFirst) {
  // The common Redis recipes: one rule per dimension, each its own counter; the check-then-consume
  // helper: per user and site-wide.
  Result<RuleSet> set = RuleSet::Make({
      WindowRule(ScopeType::kIp, "*", "/login", 20, 60),
      WindowRule(ScopeType::kApiKey, "*", "/login", 600, 60),
      WindowRule(ScopeType::kUser, "*", "/checkout", 3, 3600),
      WindowRule(ScopeType::kGlobal, "*", "/checkout", 1000, 60),
  });
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(
      Matched(*set, {{ScopeType::kApiKey, "k:1"}, {ScopeType::kIp, "10.0.0.1"}}, "/login"),
      (std::vector<std::string>{"ip * /login: sliding-log 20 per 60s @ ip:10.0.0.1:/login",
                                "apiKey * /login: sliding-log 600 per 60s @ apiKey:k%3A1:/login"}))
      << "the key's parts are escaped, so k:1 cannot hop into another key";
  EXPECT_EQ(Matched(*set, {{ScopeType::kUser, "u7"}}, "/checkout"),
            (std::vector<std::string>{
                "user * /checkout: sliding-log 3 per 3600s @ user:u7:/checkout",
                "global * /checkout: sliding-log 1000 per 60s @ global:*:/checkout"}))
      << "3 an hour is a lower rate than 1000 a minute";
}

TEST(Rules, SortRulesOrdersByScopeTypeThenValueThenEndpoint) {
  std::vector<Rule> rules = {WindowRule(ScopeType::kGlobal, "*", "/a", 1, 1),
                             WindowRule(ScopeType::kUser, "b", "/a", 1, 1),
                             WindowRule(ScopeType::kUser, "a", "/b", 1, 1),
                             WindowRule(ScopeType::kUser, "a", "/a", 1, 1)};
  SortRules(rules);
  std::vector<std::string> order;
  for (const Rule& r : rules) order.push_back(r.ToString().substr(0, r.ToString().find(':')));
  EXPECT_EQ(order,
            (std::vector<std::string>{"user a /a", "user a /b", "user b /a", "global * /a"}));
}

}  // namespace
}  // namespace ratelab
