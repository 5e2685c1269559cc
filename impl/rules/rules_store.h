// Where a service's rules are kept, as its admin API sees them: PostgreSQL's table
// (PostgresRules), or a fixed set read from a file, which refuses writes (ReadOnlyRules); either
// behind a thread of its own, each call waited for at most a timeout (TimedRules).
#ifndef RATELAB_IMPL_RULES_RULES_STORE_H_
#define RATELAB_IMPL_RULES_RULES_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/rules/rules.h"
#include "model/time.h"

namespace ratelab {

class RulesStore {
 public:
  virtual ~RulesStore() = default;
  // Every rule, in SortRules order.
  virtual Result<RuleSet> List() = 0;
  // Inserts the rule, or replaces the one with its rule_id. InvalidArgument naming the field when
  // it is not valid; FailedPrecondition when the store takes no writes.
  virtual Status Put(const Rule& rule) = 0;
  // NotFound when no rule has that id; FailedPrecondition when the store takes no writes.
  virtual Status Delete(std::string_view rule_id) = 0;
};

// A fixed set of rules (a rules file's): read, never written.
class ReadOnlyRules final : public RulesStore {
 public:
  // `source` names where the rules came from, for the refusal of a write.
  ReadOnlyRules(RuleSet rules, std::string source)
      : rules_(std::move(rules)), source_(std::move(source)) {}
  Result<RuleSet> List() override;
  Status Put(const Rule& rule) override;
  Status Delete(std::string_view rule_id) override;

 private:
  Status Refuse() const;
  RuleSet rules_;
  std::string source_;
};

// Another store, each call made on a thread of the store's own and waited for at most `timeout`:
// one store for the admin API of a server's several threads, which never waits longer on a
// database that stopped answering (a blocking driver would wait for good). A call past its time
// is DeadlineExceeded for its caller and still runs, so a write may take effect after its caller
// was told it failed, as any store call answered as failed may. Calls run one at a time, in the
// order made. Thread-safe.
class TimedRules final : public RulesStore {
 public:
  TimedRules(std::unique_ptr<RulesStore> inner, Duration timeout);
  // Does not wait for a call still running (its thread ends once the call does).
  ~TimedRules() override;
  TimedRules(const TimedRules&) = delete;
  TimedRules& operator=(const TimedRules&) = delete;

  Result<RuleSet> List() override;
  Status Put(const Rule& rule) override;
  Status Delete(std::string_view rule_id) override;

  // The inner store, the queue of calls, and the thread that makes them: shared with that
  // thread, which outlives the store while a call it runs has not returned.
  struct Worker;

 private:
  // Runs `call` on the worker; its answer (a Status or a Result), or DeadlineExceeded past the
  // timeout.
  template <typename Answer>
  Answer Timed(std::function<Answer(RulesStore&)> call);

  std::shared_ptr<Worker> worker_;
  Duration timeout_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_RULES_STORE_H_
