// The protocols a served rule is enforced by: in process (each thread's own, or shared by the
// threads of one server), or on Redis or PostgreSQL by the protocol of its algorithm there (or one
// chosen with serve --protocol).
#ifndef RATELAB_IMPL_SERVICE_SERVED_PROTOCOLS_H_
#define RATELAB_IMPL_SERVICE_SERVED_PROTOCOLS_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/limiters/in_process_limiter.h"
#include "impl/rules/rules_limiter.h"
#include "impl/service/metrics.h"

namespace ratelab {

// Each rule enforced in process, by memory-<its algorithm> (state kept by the limiter itself).
RulesLimiter::ProtocolMaker InProcessProtocols();
// The in-process limiters of the rules, shared by the threads of one server: the protocols of
// every thread's maker decide on the same counters (InProcessLimiter is thread-safe), one
// limiter a rule and policy. Thread-safe; must outlive what its makers make.
class SharedInProcessLimiters {
 public:
  // Each rule's limiter keeps at most about `max_keys_per_rule` keys (0: no bound;
  // MakeInProcessLimiter).
  explicit SharedInProcessLimiters(size_t max_keys_per_rule = 0)
      : max_keys_per_rule_(max_keys_per_rule) {}

  RulesLimiter::ProtocolMaker Maker();
  // Drops the keys of every rule's limiter that are idle at `now` (InProcessLimiter::DropIdle);
  // returns how many.
  int64_t DropIdle(Instant now);
  // Keys held, and keys dropped so far, every rule's summed.
  ServiceMetrics::Keys keys();

 private:
  struct Entry {
    std::string rule_id;
    Policy policy;
    std::shared_ptr<InProcessLimiter> limiter;
  };
  const size_t max_keys_per_rule_;
  std::mutex mutex_;
  std::vector<Entry> limiters_;  // guarded by mutex_; as many as rules have been
};
// Protocols chosen instead of the usual ones (serve --protocol): each enforces the rules of its
// own algorithm on its own store (a racy one among them, to see what it does in service).
using ProtocolChoices = std::vector<std::string>;
// InvalidArgument unless every one of `chosen` is a protocol on Redis or PostgreSQL, one for an
// algorithm, and on the store `store_is_sql` says.
Status CheckProtocolChoices(const ProtocolChoices& chosen, bool store_is_sql);

// Each rule enforced on a store by the protocol of its algorithm there: one of `chosen`, else
// kStoreProtocols': on Redis (stores.kv) kv-fixed-window-lua, kv-sliding-log-lua,
// kv-token-bucket-lua or kv-gcra-lua; on PostgreSQL (stores.sql) sql-fixed-window-upsert or
// sql-token-bucket. InvalidArgument for a rule of another algorithm. The store must outlive
// what the maker makes.
RulesLimiter::ProtocolMaker StoreProtocols(const Stores& stores, ProtocolChoices chosen = {});
// InvalidArgument when StoreProtocols(stores, chosen) cannot enforce `rule`, naming it.
Status CheckStoreProtocol(const Stores& stores, const Rule& rule,
                          const ProtocolChoices& chosen = {});
// The same for the first of `rules` it cannot enforce.
Status CheckStoreProtocols(const Stores& stores, const RuleSet& rules,
                           const ProtocolChoices& chosen = {});

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_SERVED_PROTOCOLS_H_
