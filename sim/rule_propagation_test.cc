#include "sim/rule_propagation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "testing/rules.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Instant kStart = kDefaultScenarioStart;

Rule UserRule(int64_t max) {
  return testing_rules::MakeRule(ScopeType::kUser, "*", "/api", Algorithm::kFixedWindow, max, 60);
}

RulesSpec OneChange(Duration at) {
  RulesSpec spec;
  spec.initial = *RuleSet::Make({UserRule(100)});
  spec.changes.push_back({at, UserRule(5)});
  spec.propagation = {milliseconds(100), seconds(2)};
  return spec;
}

TEST(RulePlan, EachNodeLearnsAChangeADrawnDelayAfterItsWriteTheSameForTheSameSeed) {
  const RulesSpec spec = OneChange(seconds(60));
  const RulePlan a = RulePlan::Make(spec, kStart, 3, {}, Random(7));
  const RulePlan b = RulePlan::Make(spec, kStart, 3, {}, Random(7));
  ASSERT_EQ(a.change_count(), 1u);
  EXPECT_EQ(a.written(0), kStart + seconds(60));
  EXPECT_EQ(a.replaced(0)->max_requests, 100);
  EXPECT_EQ(a.changed(0).max_requests, 5);
  EXPECT_EQ(a.changed(0).rule_id, a.replaced(0)->rule_id) << "a change keeps the rule's id";
  EXPECT_EQ(a.Version(1).rules().size(), 1u);
  for (int node = 0; node < 3; ++node) {
    const Duration lag = a.learned(0, node).at - a.written(0);
    EXPECT_GE(lag, milliseconds(100));
    EXPECT_LT(lag, milliseconds(2100));
    EXPECT_FALSE(a.learned(0, node).reread);
    EXPECT_EQ(a.learned(0, node).at, b.learned(0, node).at);
  }
  EXPECT_NE(a.learned(0, 0).at, a.learned(0, 1).at) << "each node draws its own delay";
}

TEST(RulePlan, ANodeWhoseListenConnectionIsDownLearnsOnlyAtItsReread) {
  RulesSpec spec = OneChange(seconds(60));
  spec.changes.push_back({seconds(61), UserRule(3)});
  // Node 1 is deaf from 59s to 90s: it misses both notifications and re-reads at 90s.
  const std::vector<DeafSpan> deaf = {{1, kStart + seconds(59), kStart + seconds(90)}};
  const RulePlan plan = RulePlan::Make(spec, kStart, 2, deaf, Random(1));
  EXPECT_FALSE(plan.learned(0, 0).reread);
  EXPECT_LT(plan.learned(0, 0).at, kStart + seconds(63));
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_TRUE(plan.learned(c, 1).reread);
    EXPECT_EQ(plan.learned(c, 1).at, kStart + seconds(90));
  }
  // A connection lost after the notification arrived loses nothing.
  const std::vector<DeafSpan> late = {{1, kStart + seconds(65), kStart + seconds(90)}};
  EXPECT_FALSE(RulePlan::Make(spec, kStart, 2, late, Random(1)).learned(1, 1).reread);
}

TEST(RulePlan, NotificationsArriveInTheOrderTheyWereWritten) {
  RulesSpec spec = OneChange(seconds(60));
  spec.changes.push_back({seconds(60) + milliseconds(1), UserRule(3)});
  spec.propagation = {Duration(0), seconds(10)};
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const RulePlan plan = RulePlan::Make(spec, kStart, 2, {}, Random(seed));
    for (int node = 0; node < 2; ++node) {
      EXPECT_LE(plan.learned(0, node).at, plan.learned(1, node).at) << "seed " << seed;
    }
  }
}

TEST(RulePlan, CountsWhatEachNodeDecidedUnderTheOldRuleOnTheRequestsTheRuleGoverns) {
  const RulePlan plan = RulePlan::Make(OneChange(seconds(10)), kStart, 1, {}, Random(3));
  const Instant learned = plan.learned(0, 0).at;
  std::vector<Arrival> arrivals = {{kStart + seconds(11), "u1", "/api", 1},
                                   {learned - milliseconds(1), "u1", "/api", 1},
                                   {learned - milliseconds(1), "u1", "/other", 1},
                                   {learned, "u1", "/api", 1},
                                   {kStart + seconds(9), "u1", "/api", 1}};
  History h;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    HistoryEvent e;
    e.id = static_cast<int64_t>(i);
    e.invoke = arrivals[i].at;
    e.decision = Decision{i != 1, 5, 0, e.invoke, Duration(0)};
    h.push_back(e);
  }
  ASSERT_GT(learned, kStart + seconds(11));
  const std::vector<StaleDecisions> stale = CountStaleDecisions(plan, arrivals, h);
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].admitted, 1) << "#0; #3 came once the node knew, #4 before the write";
  EXPECT_EQ(stale[0].denied, 1) << "#1; #2 is on an endpoint the rule does not govern";
  EXPECT_EQ(StaleDecisionsNote("rules in process", stale),
            "rules in process, under the old rules until each node learned the change: change 1: "
            "node 0 admitted 1, denied 1");
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

constexpr char kRuleChange[] = R"yaml(
nodes: 3
rules:
  initial:
    - {scope_type: user, endpoint: /api/search, algorithm: sliding-log, max_requests: 100,
       window_seconds: 60}
  changes:
    - {at: 2m, scope_type: user, endpoint: /api/search, algorithm: sliding-log, max_requests: 10,
       window_seconds: 60}
  propagation: {base: 20ms, jitter: 500ms}
limiters:
  - {protocol: kv-sliding-log-lua}
claim: {limit: 100, window: 1m}
traffic:
  - {type: constant, user: scraper, interval: 250ms, count: 1200, endpoint: /api/search}
  - {type: constant, user: other, interval: 10s, count: 5}
faults:
  - {type: listen-down, node: 2, at: 1m50s, for: 70s}
checks: [any-window-cap, key-expiry]
)yaml";

std::string NoteWith(const RunResult& r, const std::string& start) {
  for (const std::string& note : r.notes) {
    if (note.rfind(start, 0) == 0) return note;
  }
  return "";
}

TEST(RulesScenario, NodesEnforceTheOldRuleUntilTheyLearnTheChangeAndTheNotesSayWhatThatAdmitted) {
  Result<Scenario> s = ParseScenario(kRuleChange, "rule-change.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->limiters[0].DisplayName(), "kv-sliding-log-lua by rules");
  Result<RunResult> r = RunScenario(*s, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->limiters.size(), 1u);
  EXPECT_EQ(r->limiters[0].violation_count(), 0) << "the limiter keeps the old rule, the claim";
  EXPECT_EQ(r->limiters[0].PolicyText(), "the scenario's rules");
  const std::string change = NoteWith(*r, "rule change at ");
  EXPECT_NE(change.find("user * /api/search from sliding-log 100 per 60s to sliding-log 10 per "
                        "60s; learned by node 0 "),
            std::string::npos)
      << change;
  EXPECT_NE(change.find("node 2 1m later (its notification lost: at the re-read)"),
            std::string::npos)
      << change;
  const std::string stale = NoteWith(*r, "kv-sliding-log-lua by rules, under the old rules");
  // Node 2 saw a third of the scraper's 4 a second for a minute under a limit of 100 a minute.
  const size_t at = stale.find("node 2 admitted ");
  ASSERT_NE(at, std::string::npos) << stale;
  EXPECT_GT(std::stoi(stale.substr(at + 16)), 20) << stale;
  EXPECT_EQ(NoteWith(*r, "5 of 1205 requests matched no rule").empty(), false)
      << "the other user's requests to /api";

  // After the change, the nodes that learned it deny the scraper; node 2 admits until 3m.
  int64_t admitted_by_learned_nodes = 0;
  for (const HistoryEvent& e : r->limiters[0].history) {
    const bool after = e.invoke >= s->start + std::chrono::seconds(121);
    admitted_by_learned_nodes += after && e.invoke < s->start + std::chrono::seconds(180) &&
                                 e.node != 2 && e.admitted() && e.key == "user:scraper:/api/search";
  }
  EXPECT_EQ(admitted_by_learned_nodes, 0);
  Result<RunResult> again = RunScenario(*s, 1);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->history_hash(), r->history_hash()) << "one seed, one history";
  EXPECT_EQ(again->notes, r->notes);
}

TEST(RulesScenario, TheInitialRulesMayComeFromARulesFileBesideTheScenario) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "ratelab-rules-scenario";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "rules.yaml") << "rules:\n  - {scope_type: user, endpoint: /api, algorithm: "
                                       "fixed-window, max_requests: 2, window_seconds: 60}\n";
  std::ofstream(dir / "s.yaml") << "rules: {file: rules.yaml}\nlimiters:\n  - {}\n"
                                   "claim: {limit: 2, window: 1m}\ntraffic:\n"
                                   "  - {type: burst, user: u, at: 0s, count: 5}\n";
  Result<Scenario> s = LoadScenario((dir / "s.yaml").string());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->limiters[0].DisplayName(), "rules in process");
  Result<RunResult> r = RunScenario(*s, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->limiters[0].admitted, 2) << "memory-fixed-window enforces the file's rule";
  EXPECT_EQ(r->limiters[0].protocol, "memory-<each rule's algorithm>");

  std::ofstream(dir / "bad.yaml") << "rules: {file: missing.yaml}\nlimiters:\n  - {}\n";
  EXPECT_EQ(LoadScenario((dir / "bad.yaml").string()).status().message(),
            (dir / "bad.yaml").string() + ":1:15: " + (dir / "missing.yaml").string() +
                ": cannot open the rules file");
}

std::string ScenarioError(const std::string& text) {
  Result<Scenario> s = ParseScenario(text, "s.yaml");
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(RulesScenario, BadRulesSectionsAreRefusedAtTheKeyAtFault) {
  const std::string head =
      "rules:\n  initial:\n    - {scope_type: user, algorithm: gcra, max_requests: 10, "
      "window_seconds: 1, burst_size: 5}\n";
  const std::string rest =
      "claim: {limit: 5, window: 1s}\ntraffic:\n  - {type: burst, user: u, at: 0s, count: 3}\n";
  EXPECT_EQ(
      ScenarioError(head + "limiters:\n  - {algorithm: gcra, burst: 5, interval: 1s}\n" + rest),
      "s.yaml:5:17: 'algorithm': in a scenario with rules, each rule sets its own policy; a "
      "limiter gives only its protocol (or none: memory-<the rule's algorithm>), name, "
      "durability and on_store_error");
  EXPECT_EQ(ScenarioError(head + "limiters:\n  - {protocol: kv-fixed-window-lua}\n" + rest),
            "s.yaml:5:16: cannot enforce the rule 'user * *: gcra 10 per 1s, burst 5': "
            "protocol 'kv-fixed-window-lua' implements fixed-window, not gcra");
  EXPECT_EQ(ScenarioError(head + "limiters:\n  - {}\n" +
                          "traffic:\n  - {type: burst, user: u, at: 0s, count: 3}\n"),
            "s.yaml:1:1: missing 'claim': a scenario with rules needs the claim its limiters are "
            "held to ({limit: N, window: W})");
  EXPECT_EQ(ScenarioError(head + "limiters:\n  - {}\n" + rest + "checks: [promise]\n"),
            "s.yaml:9:10: the check promise judges a limiter by its own policy, and a limiter by "
            "rules has one per rule: a scenario with rules is held to its claim (any-window-cap, "
            "aligned-window-cap, anchored-window-cap) and key-expiry");
  EXPECT_EQ(ScenarioError(head +
                          "  changes:\n    - {at: 2s, scope_type: user, algorithm: gcra, "
                          "max_requests: 10, window_seconds: -1, burst_size: 5}\n" +
                          "limiters:\n  - {}\n" + rest),
            "s.yaml:5:85: window_seconds must be between 1 and 4611686018 (got -1)");
  EXPECT_EQ(ScenarioError("limiters:\n  - {algorithm: gcra, burst: 5, interval: 1s}\n" + rest +
                          "faults:\n  - {type: listen-down, node: 0, at: 1s, for: 1s}\n"),
            "s.yaml:7:5: a listen-down fault needs rules: with changes to miss");
  EXPECT_EQ(ScenarioError("rules: {}\nlimiters:\n  - {}\n" + rest),
            "s.yaml:1:8: 'rules' needs 'initial' (a list of rules) or 'file' (a rules file)");
}

}  // namespace
}  // namespace ratelab
