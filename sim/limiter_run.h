// One limiter's simulated run, from start to end: its stores (its kv store from the run's
// StoreSource, a MemoryDocs, and for a SQL protocol a PostgreSQL database from the same source),
// the simulation with the run's faults scheduled on it, and the history it made. Running only: the
// checks judge the history afterwards (checks.h).
#ifndef RATELAB_SIM_LIMITER_RUN_H_
#define RATELAB_SIM_LIMITER_RUN_H_

#include <memory>
#include <vector>

#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/store/memory_docs.h"
#include "model/history.h"
#include "sim/faulty_stores.h"
#include "sim/scenario.h"
#include "sim/simulation.h"
#include "sim/store_source.h"

namespace ratelab {

class LimiterRun {
 public:
  // Runs `spec` on `arrivals` with `faults` (their `at` counted from config.start), its kv store
  // from `kv_source`. A limiter that keeps no kv state gets an (unused) MemoryKv rather than a
  // real server. A limiter by rules enforces on each node the rules `rules` says the node has
  // learned by then (required for it, unused otherwise). `keep_lapses`: the kv store keeps each
  // key it finds expired (Lapses), for a short run.
  LimiterRun(const SimulationConfig& config, const LimiterSpec& spec,
             const std::vector<FaultSpec>& faults, const std::vector<Arrival>& arrivals,
             StoreSource& kv_source, const RulePlan* rules = nullptr, bool keep_lapses = false);
  LimiterRun(const LimiterRun&) = delete;
  LimiterRun& operator=(const LimiterRun&) = delete;

  // Not OK when the kv store could not be had, or failed (not by a simulated fault) during the
  // run: the history is then worthless.
  const Status& status() const { return status_; }
  const History& history() const { return history_; }
  History TakeHistory() { return std::move(history_); }
  // The state left at the end: in process memory (summed over the nodes) and in the stores.
  StateSize State();
  // What the run left in its stores that nothing will ever free: kv keys without a TTL
  // ("store key K"), documents no TTL index will delete ("document ..."), and SQL rows that
  // expired before the last statement that reached the store and were still there after it
  // ("row of TABLE for K"): a protocol that sweeps expired rows as it goes leaves none.
  std::vector<NeverFreed> NeverExpire();
  // The keys the kv store found expired, when the run kept them (MemoryKv's; none on a real
  // server).
  std::vector<KeyLapse> Lapses() {
    return stores_.kv ? stores_.kv->Lapses() : std::vector<KeyLapse>{};
  }

 private:
  // The stores, and the link the nodes reach them by (cut by outages and restarts).
  struct StoreSet {
    StoreSet(const Clock& clock, Durability durability, StoreSource& source, StoreKind store);
    void Restart();

    Status status;
    std::unique_ptr<KvBackend> kv;
    MemoryDocs docs;
    StoreLink link;
    std::unique_ptr<FaultyKv> faulty_kv;
    std::unique_ptr<SqlBackend> sql;  // only for a SQL protocol
    std::unique_ptr<FaultySql> faulty_sql;
    FaultyDocs faulty_docs{docs, link};
  };
  void Schedule(const FaultSpec& fault, Instant at);
  // `spec`'s protocol for `policy`, guarded by its failure policy.
  Result<std::unique_ptr<Protocol>> Make(const LimiterSpec& spec, const Policy& policy);

  Simulation sim_;
  StoreSet stores_;
  Stores handles_{nullptr, &stores_.faulty_docs};  // what the protocols are made on
  History history_;
  Status status_;
  Status replica_failure_;  // a failover the store could not model
  // For a limiter by rules: the version of the rules each node enforces (RulePlan::Version).
  std::vector<size_t> rules_version_;
  // For a limiter via http without rules: its one rule.
  RuleSet one_rule_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_LIMITER_RUN_H_
