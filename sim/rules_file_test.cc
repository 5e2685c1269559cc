#include "sim/rules_file.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

std::string RulesFileError(const std::string& text) {
  Result<RuleSet> r = ParseRules(text, "rules.yaml");
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(RulesFile, ReadsEveryFieldWithDefaults) {
  Result<RuleSet> r = ParseRules(
      "rules:\n"
      "  - scope_type: user\n"
      "    endpoint: /api/search\n"
      "    algorithm: sliding-log\n"
      "    max_requests: 100\n"
      "    window_seconds: 60\n"
      "  - scope_type: apiKey\n"
      "    scope_value: \"k:{1}\"\n"
      "    endpoint: /api/*\n"
      "    algorithm: token-bucket\n"
      "    max_requests: 10\n"
      "    window_seconds: 1\n"
      "    burst_size: 20\n"
      "    rule_id: 7C9E6679-7425-40DE-944B-E07FC1F90AE7\n",
      "rules.yaml");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rules().size(), 2u);
  const Rule& search = r->rules()[0];
  EXPECT_EQ(search.scope_value, "*");
  EXPECT_EQ(search.rule_id, DerivedRuleId(ScopeType::kUser, "*", "/api/search"));
  EXPECT_EQ(search.ToString(), "user * /api/search: sliding-log 100 per 60s");
  EXPECT_EQ(r->rules()[1].rule_id, "7c9e6679-7425-40de-944b-e07fc1f90ae7") << "lowercased";
  EXPECT_EQ(r->rules()[1].ToPolicy(),
            Policy::Bucket(Algorithm::kTokenBucket, 20, std::chrono::milliseconds(100)));
}

TEST(RulesFile, ErrorsPointAtTheField) {
  const std::string head = "rules:\n  - scope_type: user\n    algorithm: token-bucket\n";
  EXPECT_EQ(RulesFileError(head + "    max_requests: 10\n    window_seconds: 60\n"),
            "rules.yaml:2:5: burst_size is missing: a token-bucket rule needs a burst_size, how "
            "many requests it admits at once");
  EXPECT_EQ(
      RulesFileError(head + "    max_requests: 10\n    window_seconds: -5\n    burst_size: 1\n"),
      "rules.yaml:5:21: window_seconds must be between 1 and 4611686018 (got -5)");
  EXPECT_EQ(
      RulesFileError("rules:\n  - scope_type: team\n"),
      "rules.yaml:2:17: unknown scope_type 'team' (expected user, org, ip, apiKey or global)");
  EXPECT_EQ(RulesFileError("rules:\n  - scope_type: user\n    algorithm: leaky\n"),
            "rules.yaml:3:16: unknown algorithm 'leaky' (expected fixed-window, sliding-log, "
            "sliding-counter, token-bucket, gcra, anchored-window, sliding-log-closed, "
            "sliding-counter-anchored, token-bucket-intervals, token-bucket-credit, "
            "anchored-window-half-open or sliding-counter-anchored-floored)");
  EXPECT_EQ(RulesFileError("rules:\n  - scope_type: user\n    window: 60\n"),
            "rules.yaml:3:5: unknown key 'window' in a rule (expected one of: rule_id, scope_type, "
            "scope_value, endpoint, algorithm, max_requests, window_seconds, burst_size)");
  EXPECT_EQ(
      RulesFileError("rules:\n  - scope_type: user\n    algorithm: gcra\n    max_requests: ten\n"),
      "rules.yaml:4:19: 'max_requests' must be an integer");
  const std::string rule =
      "  - scope_type: ip\n    endpoint: /login\n    algorithm: fixed-window\n"
      "    max_requests: 5\n    window_seconds: 60\n";
  EXPECT_EQ(RulesFileError("rules:\n" + rule + rule),
            "rules.yaml:8:15: endpoint rules[0] already limits ip * on /login (one rule per "
            "scope, value and endpoint)");
  EXPECT_EQ(RulesFileError("limits: []\n"),
            "rules.yaml:1:1: unknown key 'limits' in the rules file (expected one of: rules)");
  EXPECT_EQ(RulesFileError("rules: [\n"),
            "rules.yaml:2:1: not YAML: end of sequence flow not found");
  EXPECT_EQ(LoadRules("/nonexistent/rules.yaml").status().message(),
            "/nonexistent/rules.yaml: cannot open the rules file");
  EXPECT_EQ(LoadRules("/").status().message(),
            "/: the rules file is a directory, not a regular file");
}

// Found by fuzz/rules_file.cc: bytes that are not UTF-8 were read, and written back as other
// bytes (and PostgreSQL's text would refuse them).
TEST(RulesFile, AValueThatIsNotUtf8IsRefusedAtItsField) {
  EXPECT_EQ(RulesFileError("rules:\n  - {scope_type: ip, scope_value: \"10.\xd4\xd1"
                           "0.1\", "
                           "algorithm: gcra, max_requests: 3, window_seconds: 3, burst_size: 1}\n"),
            "rules.yaml:2:35: scope_value is not UTF-8 text (or holds a NUL byte)");
}

TEST(RulesFile, WritesWhatItReadsBack) {
  std::vector<Rule> rules;
  for (const std::string value : {"*", "~", "yes", "k:{1}", "a\"b\nc", "null"}) {
    Rule r;
    r.scope_type = ScopeType::kApiKey;
    r.scope_value = value;
    r.endpoint = "/a b/*";
    r.algorithm = Algorithm::kGcra;
    r.max_requests = 4;
    r.window_seconds = 1;
    r.burst_size = 2;
    r.rule_id = DerivedRuleId(r.scope_type, r.scope_value, r.endpoint);
    rules.push_back(r);
  }
  SortRules(rules);
  Result<RuleSet> set = RuleSet::Make(rules);
  ASSERT_TRUE(set.ok()) << set.status();
  const std::string yaml = RulesYaml(*set);
  Result<RuleSet> back = ParseRules(yaml, "exported");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(*back, *set) << yaml;
  EXPECT_EQ(RulesYaml(*back), yaml);
}

}  // namespace
}  // namespace ratelab
