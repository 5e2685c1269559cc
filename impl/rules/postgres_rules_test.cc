#include "impl/rules/postgres_rules.h"

#include <gtest/gtest.h>

#include "impl/store/postgres_sql.h"
#include "testing/postgres.h"
#include "testing/rules.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;

Rule MakeRule(ScopeType type, std::string value, std::string endpoint, int64_t max) {
  return testing_rules::MakeRule(type, std::move(value), std::move(endpoint),
                                 Algorithm::kFixedWindow, max, 60);
}

RuleSet Rules(std::vector<Rule> rules) {
  Result<RuleSet> set = RuleSet::Make(std::move(rules));
  EXPECT_TRUE(set.ok()) << set.status();
  return set.ok() ? *set : RuleSet();
}

// Polls until the cache holds `count` rules or 5 s pass.
bool PollUntil(RulesCache& cache, size_t count) {
  for (int i = 0; i < 50 && cache.rules().rules().size() != count; ++i) {
    if (Status s = cache.Poll(milliseconds(100)); !s.ok()) ADD_FAILURE() << s;
  }
  return cache.rules().rules().size() == count;
}

TEST(PostgresRules, ImportListsBackAndCountsWhatChanged) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  Result<std::unique_ptr<PostgresRules>> store = PostgresRules::Open(server->conninfo());
  ASSERT_TRUE(store.ok()) << store.status();
  Rule bucket = MakeRule(ScopeType::kApiKey, "k:{1}", "/api/*", 100);
  bucket.algorithm = Algorithm::kGcra;
  bucket.burst_size = 20;
  const RuleSet first = Rules({MakeRule(ScopeType::kUser, "*", "/api/search", 10), bucket,
                               MakeRule(ScopeType::kGlobal, "*", "*", 5000)});
  Result<RulesImport> imported = (*store)->Import(first, false);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->inserted, 3);
  Result<RuleSet> listed = (*store)->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  std::vector<Rule> sorted = first.rules();
  SortRules(sorted);
  EXPECT_EQ(listed->rules(), sorted) << "every field comes back as it went in";

  // Again, with one rule changed and one left out: replace deletes it.
  Rule changed = first.rules()[0];
  changed.max_requests = 12;
  imported = (*store)->Import(Rules({changed, bucket}), true);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->inserted, 0);
  EXPECT_EQ(imported->updated, 1);
  EXPECT_EQ(imported->unchanged, 1);
  EXPECT_EQ(imported->deleted, 1);
  EXPECT_EQ((*store)->List()->rules().size(), 2u);

  // A rule for a target another rule_id holds: refused, naming it, and nothing written.
  Rule clash = MakeRule(ScopeType::kUser, "*", "/api/search", 1);
  clash.rule_id = "00000000-0000-4000-8000-000000000001";
  Result<RulesImport> refused =
      (*store)->Import(Rules({MakeRule(ScopeType::kOrg, "acme", "*", 9), clash}), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::string(refused.status().message()).starts_with("rules[1] (user * /api/search:"))
      << refused.status();
  EXPECT_NE(refused.status().message().find("\"target\""), std::string::npos) << refused.status();
  EXPECT_EQ((*store)->List()->rules().size(), 2u) << "the org rule was rolled back";

  EXPECT_TRUE((*store)->Delete(bucket.rule_id).ok());
  EXPECT_EQ((*store)->Delete(bucket.rule_id).code(), absl::StatusCode::kNotFound);
  Rule bad = bucket;
  bad.burst_size.reset();
  EXPECT_TRUE(std::string((*store)->Put(bad).message()).starts_with("burst_size: is missing"));
}

TEST(PostgresRules, TheTableRefusesBadRowsNamingTheField) {
  // What another tool (psql, an admin API) writes meets the same rules as ratelab's code.
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  ASSERT_TRUE(PostgresRules::Open(server->conninfo()).ok());
  PostgresSql sql(server->conninfo());
  const std::string insert =
      "INSERT INTO ratelab.rules (rule_id, scope_type, scope_value, endpoint, algorithm, "
      "max_requests, window_seconds, burst_size) VALUES (gen_random_uuid(), ";
  struct Case {
    std::string values;
    std::string constraint;
  };
  const Case cases[] = {
      {"'user', '*', '/a', 'token-bucket', 10, 60, NULL)", "burst_size"},
      {"'user', '*', '/a', 'fixed-window', 10, 60, 5)", "burst_size"},
      {"'user', '*', '/a', 'token-bucket', 7, 1, 5)", "burst_size"},
      {"'user', '*', '/a', 'fixed-window', 10, -1, NULL)", "window_seconds"},
      {"'team', '*', '/a', 'fixed-window', 10, 60, NULL)", "scope_type"},
      {"'global', 'u1', '/a', 'fixed-window', 10, 60, NULL)", "scope_value"},
      {"'user', '*', '/a*', 'fixed-window', 10, 60, NULL)", "endpoint"},
      {"'user', '*', '/a', 'leaky', 10, 60, NULL)", "algorithm"},
      {"'user', '*', '/a', 'fixed-window', 0, 60, NULL)", "max_requests"},
  };
  for (const Case& c : cases) {
    const Status s = sql.Run(insert + c.values);
    EXPECT_NE(s.message().find("violates check constraint \"" + c.constraint + "\""),
              std::string::npos)
        << c.values << ": " << s;
  }
  EXPECT_TRUE(sql.Run(insert + "'user', '*', '/api/*', 'token-bucket', 100, 60, 10)").ok());
}

TEST(PostgresRules, TheCacheFollowsNotifiesAndRereadsAfterLosingItsConnection) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  Result<std::unique_ptr<PostgresRules>> store = PostgresRules::Open(server->conninfo());
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Put(MakeRule(ScopeType::kUser, "*", "*", 100)).ok());
  Result<std::unique_ptr<RulesCache>> opened = RulesCache::Open(server->conninfo());
  ASSERT_TRUE(opened.ok()) << opened.status();
  RulesCache& cache = **opened;
  EXPECT_EQ(cache.rules().rules().size(), 1u);
  EXPECT_EQ(cache.full_reads(), 1);

  // A change arrives by NOTIFY, and only the changed rule is read.
  Rule search = MakeRule(ScopeType::kUser, "*", "/api/search", 10);
  ASSERT_TRUE((*store)->Put(search).ok());
  ASSERT_TRUE(PollUntil(cache, 2));
  search.max_requests = 5;
  ASSERT_TRUE((*store)->Put(search).ok());
  for (int i = 0; i < 50 && cache.rules().Find(search.rule_id)->max_requests != 5; ++i) {
    ASSERT_TRUE(cache.Poll(milliseconds(100)).ok());
  }
  EXPECT_EQ(cache.rules().Find(search.rule_id)->max_requests, 5);
  EXPECT_EQ(cache.full_reads(), 1);
  EXPECT_EQ(cache.notifications(), 2);

  // The backend serving the listen connection is terminated; a rule written meanwhile is
  // notified to nobody. The next poll finds the connection gone, listens again and reads all.
  PostgresSql admin(server->conninfo());
  ASSERT_TRUE(
      admin.Run("SELECT pg_terminate_backend(" + std::to_string(cache.backend_pid()) + ")").ok());
  ASSERT_TRUE((*store)->Put(MakeRule(ScopeType::kOrg, "acme", "*", 1000)).ok());
  ASSERT_TRUE(PollUntil(cache, 3)) << "the rule written while disconnected was read";
  EXPECT_EQ(cache.full_reads(), 2);

  // Deleting, and emptying the table, reach it too.
  ASSERT_TRUE((*store)->Delete(search.rule_id).ok());
  ASSERT_TRUE(PollUntil(cache, 2));
  ASSERT_TRUE(admin.Run("TRUNCATE ratelab.rules").ok());
  ASSERT_TRUE(PollUntil(cache, 0));

  // With the server down the cache keeps its rules and says it cannot reach it.
  ASSERT_TRUE((*store)->Put(search).ok());
  ASSERT_TRUE(PollUntil(cache, 1));
  ASSERT_TRUE(server->Stop().ok());
  Status down = cache.Poll(milliseconds(100));
  for (int i = 0; i < 20 && down.ok(); ++i) down = cache.Poll(milliseconds(100));
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable) << down;
  EXPECT_EQ(cache.rules().rules().size(), 1u);
  ASSERT_TRUE(server->Launch().ok());
  ASSERT_TRUE(cache.Poll(milliseconds(0)).ok());
  EXPECT_EQ(cache.rules().rules().size(), 1u);
}

}  // namespace
}  // namespace ratelab
