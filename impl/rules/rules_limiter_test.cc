#include "impl/rules/rules_limiter.h"

#include <gtest/gtest.h>

#include "impl/limiters/in_process_protocol.h"
#include "testing/rules.h"

namespace ratelab {
namespace {

using std::chrono::seconds;

constexpr Instant kStart = FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000);

Rule FixedWindow(ScopeType type, std::string value, std::string endpoint, int64_t max) {
  return testing_rules::MakeRule(type, std::move(value), std::move(endpoint),
                                 Algorithm::kFixedWindow, max, 60);
}

// A limiter over `rules` (which the test may change), each rule enforced in process; counts the
// instances made.
struct Fixture {
  RuleSet rules;
  int made = 0;
  RulesLimiter limiter{
      [this]() -> const RuleSet& { return rules; },
      [this](const Rule& rule) -> Result<std::unique_ptr<Protocol>> {
        ++made;
        return std::unique_ptr<Protocol>(std::make_unique<InProcessProtocol>(rule.ToPolicy()));
      }};
  InlineExecutor executor;
  Context ctx{executor};

  Result<Decision> Ask(const std::string& user, const std::string& endpoint) {
    const Request r{"user", user, endpoint, 1, kStart};
    return RunInline(limiter.Decide(ctx, r));
  }
};

TEST(RulesLimiter, EveryMatchingRuleCountsOnItsOwnKeyAndTheFirstDenialAnswers) {
  Fixture f;
  f.rules = *RuleSet::Make({FixedWindow(ScopeType::kUser, "*", "/api/*", 2),
                            FixedWindow(ScopeType::kGlobal, "*", "/api/search", 3)});
  // u1 spends its own 2; the site-wide limit has 1 left.
  EXPECT_TRUE(f.Ask("u1", "/api/search")->allowed);
  Result<Decision> second = f.Ask("u1", "/api/search");
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->allowed);
  EXPECT_EQ(second->limit, 2) << "the most restrictive rule's answer";
  EXPECT_EQ(second->remaining, 0);
  EXPECT_FALSE(f.Ask("u1", "/api/search")->allowed) << "u1's own rule denies";
  EXPECT_TRUE(f.Ask("u2", "/api/search")->allowed)
      << "u1's denial spent nothing of the global rule: it has 1 left";
  Result<Decision> global = f.Ask("u3", "/api/search");
  ASSERT_TRUE(global.ok());
  EXPECT_FALSE(global->allowed) << "the site-wide 3 are spent";
  EXPECT_EQ(global->limit, 3);
  EXPECT_TRUE(f.Ask("u3", "/api/other")->allowed) << "the global rule is for /api/search only";
}

TEST(RulesLimiter, ARequestNoRuleMatchesIsAdmittedWithoutAStep) {
  Fixture f;
  f.rules = *RuleSet::Make({FixedWindow(ScopeType::kUser, "*", "/api/search", 1)});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(f.Ask("u1", "/checkout")->allowed);
  EXPECT_EQ(f.made, 0);
}

TEST(RulesLimiter, AChangedRuleIsEnforcedFromTheNextRequestByANewInstance) {
  Fixture f;
  f.rules = *RuleSet::Make({FixedWindow(ScopeType::kUser, "*", "/api", 1)});
  EXPECT_TRUE(f.Ask("u1", "/api")->allowed);
  EXPECT_FALSE(f.Ask("u1", "/api")->allowed);
  f.rules = *RuleSet::Make({FixedWindow(ScopeType::kUser, "*", "/api", 5)});
  Result<Decision> d = f.Ask("u1", "/api");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->allowed);
  EXPECT_EQ(d->limit, 5);
  EXPECT_EQ(f.made, 2);
  f.rules = *RuleSet::Make({FixedWindow(ScopeType::kUser, "*", "/api", 1)});
  EXPECT_FALSE(f.Ask("u1", "/api")->allowed) << "the first rule's instance again, with its count";
  EXPECT_EQ(f.made, 2);
  f.limiter.Restart();
  EXPECT_TRUE(f.Ask("u1", "/api")->allowed) << "a restart forgets every instance";
  EXPECT_EQ(f.made, 3);
}

TEST(RulesLimiter, AnUnknownScopeTypeIsAnErrorNamingTheField) {
  Fixture f;
  InlineExecutor executor;
  Context ctx(executor);
  const Request r{"team", "t1", "/api", 1, kStart};
  const Result<Decision> d = RunInline(f.limiter.Decide(ctx, r));
  EXPECT_EQ(d.status().message(),
            "scope_type: 'team' is not a scope type; expected user, org, ip, apiKey or global");
}

}  // namespace
}  // namespace ratelab
