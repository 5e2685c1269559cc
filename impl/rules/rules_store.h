// Where a service's rules are kept, as its admin API sees them: PostgreSQL's table
// (PostgresRules), or a fixed set read from a file, which refuses writes (ReadOnlyRules); either
// behind a lock for several threads (LockedRules).
#ifndef RATELAB_IMPL_RULES_RULES_STORE_H_
#define RATELAB_IMPL_RULES_RULES_STORE_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/rules/rules.h"

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

// Another store behind a lock: one store for the admin API of a server's several threads.
class LockedRules final : public RulesStore {
 public:
  explicit LockedRules(std::unique_ptr<RulesStore> inner) : inner_(std::move(inner)) {}
  Result<RuleSet> List() override {
    std::lock_guard lock(mutex_);
    return inner_->List();
  }
  Status Put(const Rule& rule) override {
    std::lock_guard lock(mutex_);
    return inner_->Put(rule);
  }
  Status Delete(std::string_view rule_id) override {
    std::lock_guard lock(mutex_);
    return inner_->Delete(rule_id);
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<RulesStore> inner_;  // guarded by mutex_
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_RULES_STORE_H_
