// The limit service's rules store on PostgreSQL: the table ratelab.rules (rules.h's fields, one
// column each, with CHECK constraints that refuse what FindProblem refuses, each named after its
// field), a trigger that NOTIFYs every change on the channel ratelab_rules (the changed rule_id, or
// "*" after a TRUNCATE), PostgresRules to read and write the rules, and RulesCache, a decider's
// copy that LISTENs.
//
// Notifications are lost while a listener is disconnected: RulesCache, on finding its connection
// gone, connects again, LISTENs, and only then reads every rule again, so that no change made
// after the read can be missed.
#ifndef RATELAB_IMPL_RULES_POSTGRES_RULES_H_
#define RATELAB_IMPL_RULES_POSTGRES_RULES_H_

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/rules/rules.h"
#include "impl/rules/rules_store.h"

namespace ratelab {

// The channel the trigger notifies.
inline constexpr std::string_view kRulesChannel = "ratelab_rules";

// The DDL that makes the schema, the table, its constraints and the trigger when missing
// (idempotent; run under an advisory lock so that two processes may run it at once).
std::string RulesTableDdl();

struct RulesImport {
  int64_t inserted = 0;
  int64_t updated = 0;
  int64_t unchanged = 0;
  int64_t deleted = 0;  // with `replace`: rules the table held that the import did not
};

class PostgresRules final : public RulesStore {
 public:
  // Connects to `conninfo` (a libpq string or a postgresql:// URL) and makes the table when it
  // is missing. Unavailable when the server cannot be reached.
  static Result<std::unique_ptr<PostgresRules>> Open(const std::string& conninfo);
  ~PostgresRules() override;
  PostgresRules(const PostgresRules&) = delete;
  PostgresRules& operator=(const PostgresRules&) = delete;

  // Every rule, in SortRules order. InvalidArgument naming the rule
  // and field when a row the table holds is not a valid rule (written by another tool).
  Result<RuleSet> List() override;
  // Writes every rule of `rules` in one transaction, inserting new rule_ids and updating the
  // others; with `replace`, also deletes the rules `rules` does not hold. Nothing is written when
  // any statement fails.
  Result<RulesImport> Import(const RuleSet& rules, bool replace);
  // Inserts or updates one rule (InvalidArgument naming the field when it is not valid).
  Status Put(const Rule& rule) override;
  // Deletes the rule; NotFound when there is none with that id.
  Status Delete(std::string_view rule_id) override;

 private:
  struct Connection;
  explicit PostgresRules(std::unique_ptr<Connection> conn);
  std::unique_ptr<Connection> conn_;
};

class RulesCache {
 public:
  // Connects, LISTENs and reads every rule. Unavailable when the server cannot be reached.
  static Result<std::unique_ptr<RulesCache>> Open(const std::string& conninfo);
  ~RulesCache();
  RulesCache(const RulesCache&) = delete;
  RulesCache& operator=(const RulesCache&) = delete;

  // Waits up to `wait` for a notification, then applies every change notified so far (reading
  // each changed rule again). When the connection is found lost, connects again and reads every
  // rule. Unavailable while the server cannot be reached: the rules read last stay in force.
  Status Poll(std::chrono::milliseconds wait);
  const RuleSet& rules() const { return rules_; }
  // The server process serving the listen connection (to terminate it in a test).
  int backend_pid() const;
  // How many times every rule was read: 1, and one more for each reconnection.
  int64_t full_reads() const { return full_reads_; }
  // How many notifications were applied.
  int64_t notifications() const { return notifications_; }

 private:
  struct Listener;
  explicit RulesCache(std::string conninfo);
  Status Connect();
  Status ReadAll();
  Status Apply();

  std::string conninfo_;
  std::unique_ptr<Listener> listener_;
  RuleSet rules_;
  int64_t full_reads_ = 0;
  int64_t notifications_ = 0;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_POSTGRES_RULES_H_
