#include "sim/limiter_run.h"

#include "impl/limiters/failure_policy.h"
#include "impl/rules/rules_limiter.h"
#include "impl/service/service_protocol.h"

namespace ratelab {

LimiterRun::StoreSet::StoreSet(const Clock& clock, Durability durability, StoreSource& source,
                               StoreKind store)
    : docs(clock, durability) {
  Result<std::unique_ptr<KvBackend>> opened =
      store == StoreKind::kKv ? source.Open(clock, durability) : OpenMemoryKv(clock, durability);
  if (!opened.ok()) {
    status = opened.status();
    return;
  }
  kv = *std::move(opened);
  faulty_kv = std::make_unique<FaultyKv>(*kv, link);
  if (store == StoreKind::kSql) {
    Result<std::unique_ptr<SqlBackend>> opened_sql = source.OpenSql(durability);
    if (!opened_sql.ok()) {
      status = opened_sql.status();
      return;
    }
    sql = *std::move(opened_sql);
    faulty_sql = std::make_unique<FaultySql>(*sql, link);
  }
}

void LimiterRun::StoreSet::Restart() {
  kv->Restart();
  docs.Restart();
  if (sql != nullptr) sql->Restart();
}

LimiterRun::LimiterRun(const SimulationConfig& config, const LimiterSpec& spec,
                       const std::vector<FaultSpec>& faults, const std::vector<Arrival>& arrivals,
                       StoreSource& kv_source, const RulePlan* rules, bool keep_lapses)
    : sim_(config, nullptr), stores_(sim_.clock(), spec.durability, kv_source, spec.Info()->store) {
  if (!stores_.status.ok()) {
    status_ = stores_.status;
    return;
  }
  if (keep_lapses) stores_.kv->KeepLapses();
  handles_.kv = stores_.faulty_kv.get();
  handles_.clock = &sim_.clock();
  handles_.sql = stores_.faulty_sql.get();
  if (spec.by_rules && rules == nullptr) {
    status_ = absl::InvalidArgumentError("the limiter " + spec.DisplayName() +
                                         " enforces rules, and the run has none");
    return;
  }
  if (spec.by_rules) {
    rules_version_.assign(config.nodes.size(), 0);
    for (size_t c = 0; c < rules->change_count(); ++c) {
      for (int node = 0; node < rules->nodes(); ++node) {
        sim_.At(rules->learned(c, node).at, [this, c, node] {
          size_t& version = rules_version_[static_cast<size_t>(node)];
          version = std::max(version, c + 1);
        });
      }
    }
  } else if (spec.via_http) {
    Result<Rule> rule = RuleForEveryone(spec.policy);
    if (!rule.ok()) {
      status_ = rule.status();
      return;
    }
    one_rule_ = *RuleSet::Make({*std::move(rule)});
  }
  sim_.SetFactory([this, &spec, rules](int node) -> std::unique_ptr<Protocol> {
    // What a node decides by: its copy of the scenario's rules, or the limiter's one rule.
    RulesLimiter::RulesSource source = [this, rules, node]() -> const RuleSet& {
      return rules != nullptr && !rules_version_.empty()
                 ? rules->Version(rules_version_[static_cast<size_t>(node)])
                 : one_rule_;
    };
    if (spec.via_http) {
      // The service guards the store itself: the protocols under it are bare.
      return std::make_unique<ServiceProtocol>(
          std::move(source),
          [this, &spec](const Rule& rule) { return spec.Make(rule.ToPolicy(), handles_); },
          spec.on_store_error);
    }
    if (spec.by_rules) {
      return std::make_unique<RulesLimiter>(std::move(source), [this, &spec](const Rule& rule) {
        return Make(spec, rule.ToPolicy());
      });
    }
    return *Make(spec, spec.policy);
  });
  for (const FaultSpec& f : faults) Schedule(f, config.start + f.at);
  history_ = sim_.Run(arrivals);
  status_ = stores_.kv->failure();
  if (status_.ok()) status_ = replica_failure_;
  if (status_.ok() && stores_.sql != nullptr) status_ = stores_.sql->failure();
}

Result<std::unique_ptr<Protocol>> LimiterRun::Make(const LimiterSpec& spec, const Policy& policy) {
  Result<std::unique_ptr<Protocol>> p = spec.Make(policy, handles_);
  if (!p.ok() || spec.on_store_error.kind == FailurePolicy::Kind::kError) return p;
  return std::unique_ptr<Protocol>(
      std::make_unique<GuardedProtocol>(*std::move(p), policy, spec.on_store_error));
}

void LimiterRun::Schedule(const FaultSpec& f, Instant at) {
  switch (f.kind) {
    case FaultKind::kCrash:
      sim_.CrashNode(f.node, at, f.amount);
      break;
    case FaultKind::kClockJump:
      sim_.JumpClock(f.node, at, f.amount);
      break;
    case FaultKind::kLatencySpike:
      sim_.LatencySpike(at, f.amount, f.extra);
      break;
    case FaultKind::kStoreOutage:
      sim_.At(at, [this] { stores_.link.Down(); });
      sim_.At(at + f.amount, [this] { stores_.link.Up(); });
      break;
    case FaultKind::kListenDown:  // in the rule plan: it decides when nodes learn changes
    case FaultKind::kClockSkew:   // a node's clock_offset, set before the run
      break;
    case FaultKind::kStoreStall:
      sim_.At(at, [this] { stores_.link.Stall(); });
      sim_.At(at + f.amount, [this] { stores_.link.Resume(); });
      break;
    case FaultKind::kStoreRestart:
      sim_.At(at, [this] {
        stores_.link.Down();
        stores_.Restart();
      });
      sim_.At(at + f.amount, [this] { stores_.link.Up(); });
      break;
    case FaultKind::kStoreFailover: {
      // The replica (following from the start) stops `extra` before the master is lost, and
      // takes its place; the clients reach it `amount` later.
      const auto replica = [this](KvBackend::ReplicaEvent event) {
        return [this, event] {
          if (Status s = stores_.kv->OnReplica(event); !s.ok() && replica_failure_.ok()) {
            replica_failure_ = s;
          }
        };
      };
      sim_.At(std::max(sim_.clock().Now(), at - f.extra),
              replica(KvBackend::ReplicaEvent::kDetach));
      sim_.At(at, [this, fail_over = replica(KvBackend::ReplicaEvent::kFailOver)] {
        stores_.link.Down();
        fail_over();
      });
      sim_.At(at + f.amount, [this] { stores_.link.Up(); });
      break;
    }
  }
}

StateSize LimiterRun::State() {
  StateSize s = sim_.ProcessState();
  s += stores_.kv->Usage();
  s += stores_.docs.Usage();
  if (stores_.sql != nullptr) s += stores_.sql->Usage();
  return s;
}

std::vector<NeverFreed> LimiterRun::NeverExpire() {
  std::vector<NeverFreed> out;
  for (const std::string& key : stores_.kv->KeysWithoutExpiry()) {
    out.push_back({"store key " + key, "no TTL", {key}});
  }
  for (NeverFreed& doc : stores_.docs.DocumentsWithoutExpiry()) {
    doc.name = "document " + doc.name;
    out.push_back(std::move(doc));
  }
  if (stores_.sql != nullptr) {
    // The client's clock of the last admission the store made: a protocol that sweeps as it
    // writes deleted there every row that had expired by then.
    const HistoryEvent* last = nullptr;
    for (const HistoryEvent& e : history_) {
      if (e.admitted() && !e.steps.empty() &&
          (last == nullptr || e.steps.back().at >= last->steps.back().at)) {
        last = &e;
      }
    }
    if (last != nullptr) {
      for (const SqlRow& row : stores_.sql->RowsExpiredBefore(last->node_now)) {
        out.push_back({"row of " + row.table + " for " + row.key,
                       "expired at " + FormatInstant(FromUnixNanos(row.expires_at)) +
                           ", before the last admission, and was not deleted",
                       {row.key}});
      }
    }
  }
  return out;
}

}  // namespace ratelab
