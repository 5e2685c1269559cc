// Rules that change during a run, and how the change reaches the nodes (the limit service: each
// decider keeps a cache of the rules, refreshed by PostgreSQL's NOTIFY).
//
// A scenario's `rules:` gives the rules in force at the start and the changes an operator makes
// later (each puts one rule: it replaces the rule with the same target, keeping that rule's id, or
// adds it). A change is written at its `at`; each node hears of it a drawn delay later
// (`propagation`), in the order the changes were written, as notifications on one connection
// arrive. A notification is lost when the node's listen connection is down at any moment from the
// write to its arrival (a `listen-down` fault, or a crash of the node): the node then learns the
// change only when it reads every rule again, at the reconnection (the end of the fault: as
// RulesCache does, it LISTENs again and then reads everything). Until a node learns a change it
// enforces the rules it had: RulePlan says when each node learned each change, and
// CountStaleDecisions what the nodes decided meanwhile under the old rules.
#ifndef RATELAB_SIM_RULE_PROPAGATION_H_
#define RATELAB_SIM_RULE_PROPAGATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/rules/rules.h"
#include "model/history.h"
#include "sim/random.h"
#include "sim/simulation_executor.h"
#include "sim/traffic.h"

namespace ratelab {

struct RuleChange {
  Duration at{};  // from the scenario's start
  Rule rule;      // its rule_id is the one it replaces, or its own (DerivedRuleId) when new
};

// A scenario's `rules:`.
struct RulesSpec {
  RuleSet initial;
  std::vector<RuleChange> changes;  // in the order of `at`
  Latency propagation{std::chrono::milliseconds(1), std::chrono::milliseconds(50)};
};

// Applies `change` to `rules`: InvalidArgument naming the rule's field when the result is not a
// valid rule set. Gives the change the id of the rule it replaces.
Result<RuleSet> ApplyChange(const RuleSet& rules, RuleChange& change);

// A span in which a node cannot hear notifications: [from, to), and at `to` it reads every rule.
struct DeafSpan {
  int node = 0;
  Instant from{};
  Instant to{};
};

class RulePlan {
 public:
  // How node `node` learned change `change`.
  struct Learned {
    Instant at{};         // when the node enforced it from
    bool reread = false;  // by reading every rule again, its notification lost
  };

  // The rule sets after each change of `spec` (which ApplyChange has checked) and, for each
  // node, when it learned each change: notified after a delay drawn from `random`, or at the
  // end of the first of `deaf` that cuts the notification off.
  static RulePlan Make(const RulesSpec& spec, Instant start, int nodes,
                       const std::vector<DeafSpan>& deaf, Random random);

  // The rules after the first `k` changes (k = 0: the initial rules).
  const RuleSet& Version(size_t k) const { return versions_[k]; }
  size_t change_count() const { return written_.size(); }
  int nodes() const { return nodes_; }
  Instant written(size_t change) const { return written_[change]; }
  // The rule as the change wrote it (with the id it took).
  const Rule& changed(size_t change) const { return changed_[change]; }
  // The rule the change replaced, or null for a new rule.
  const Rule* replaced(size_t change) const {
    return replaced_[change] ? &*replaced_[change] : nullptr;
  }
  const Learned& learned(size_t change, int node) const {
    return learned_[change * static_cast<size_t>(nodes_) + static_cast<size_t>(node)];
  }

 private:
  int nodes_ = 1;
  std::vector<RuleSet> versions_;
  std::vector<Instant> written_;
  std::vector<Rule> changed_;
  std::vector<std::optional<Rule>> replaced_;
  std::vector<Learned> learned_;  // by change, then node
};

// What one node decided, from a change's write until it learned it, on the requests the changed
// rule governs: under the old rules.
struct StaleDecisions {
  size_t change = 0;
  int node = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t unanswered = 0;  // unanswered or failed
};

// For each change and node (in that order), counted from `history` (made from `arrivals`: event
// ids are arrival indexes) by the request's arrival time.
std::vector<StaleDecisions> CountStaleDecisions(const RulePlan& plan,
                                                const std::vector<Arrival>& arrivals,
                                                const History& history);

// How many of `arrivals` no rule matched of those the database held at their arrival: requests
// a limiter by rules admits without a limit.
int64_t CountUnruled(const RulePlan& plan, const std::vector<Arrival>& arrivals);

// One line per change for a run's notes: when it was written, and when each node learned it
// ("1.204s later", "45s later, at its re-read", "not before the run ended at ...").
// `end`: the run's last arrival, after which no request could show the change.
std::vector<std::string> PropagationNotes(const RulePlan& plan, Instant end);
// One line for one limiter: what each node decided under the old rules, for each change.
std::string StaleDecisionsNote(const std::string& limiter,
                               const std::vector<StaleDecisions>& stale);

}  // namespace ratelab

#endif  // RATELAB_SIM_RULE_PROPAGATION_H_
