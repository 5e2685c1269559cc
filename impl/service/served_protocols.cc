#include "impl/service/served_protocols.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "impl/limiters/in_process_protocol.h"

namespace ratelab {

namespace {

// The protocol of each algorithm on each store that a served rule may use.
struct StoreProtocol {
  StoreKind store;  // kKv or kSql
  Algorithm algorithm;
  std::string_view protocol;
};
constexpr StoreProtocol kStoreProtocols[] = {
    {StoreKind::kKv, Algorithm::kFixedWindow, "kv-fixed-window-lua"},
    {StoreKind::kKv, Algorithm::kSlidingLog, "kv-sliding-log-lua"},
    {StoreKind::kKv, Algorithm::kTokenBucket, "kv-token-bucket-lua"},
    {StoreKind::kKv, Algorithm::kGcra, "kv-gcra-lua"},
    {StoreKind::kSql, Algorithm::kFixedWindow, "sql-fixed-window-upsert"},
    {StoreKind::kSql, Algorithm::kTokenBucket, "sql-token-bucket"},
};

StoreKind StoreOf(const Stores& stores) {
  return stores.sql != nullptr ? StoreKind::kSql : StoreKind::kKv;
}

// The server a store of `kind` is, in words.
std::string_view ServerOf(StoreKind kind) {
  return kind == StoreKind::kSql ? "PostgreSQL" : "Redis";
}

Result<std::string_view> StoreProtocolFor(StoreKind store, const Rule& rule,
                                          const ProtocolChoices& chosen) {
  for (const std::string& name : chosen) {
    const ProtocolInfo* info = FindProtocol(name);
    if (info != nullptr && info->store == store && info->algorithm == rule.algorithm) {
      return info->name;
    }
  }
  std::string enforced;
  for (const StoreProtocol& p : kStoreProtocols) {
    if (p.store != store) continue;
    if (p.algorithm == rule.algorithm) return p.protocol;
    enforced += (enforced.empty() ? "" : ", ") + std::string(AlgorithmName(p.algorithm));
  }
  return absl::InvalidArgumentError(
      "the rule '" + rule.ToString() + "' is " + std::string(AlgorithmName(rule.algorithm)) +
      ", which no protocol enforces on " + std::string(ServerOf(store)) + " (" + enforced + " do)");
}

}  // namespace

Status CheckProtocolChoices(const ProtocolChoices& chosen, bool store_is_sql) {
  const StoreKind store = store_is_sql ? StoreKind::kSql : StoreKind::kKv;
  for (size_t i = 0; i < chosen.size(); ++i) {
    const ProtocolInfo* info = FindProtocol(chosen[i]);
    if (info == nullptr || (info->store != StoreKind::kKv && info->store != StoreKind::kSql)) {
      return absl::InvalidArgumentError("'" + chosen[i] +
                                        "' is not a protocol on Redis or PostgreSQL (ratelab "
                                        "list protocols)");
    }
    if (info->store != store) {
      return absl::InvalidArgumentError(
          "'" + chosen[i] + "' runs on " + std::string(ServerOf(info->store)) +
          ", and the counters are " + (store_is_sql ? "in PostgreSQL" : "not") +
          " (--store says where)");
    }
    for (size_t j = 0; j < i; ++j) {
      if (FindProtocol(chosen[j])->algorithm == info->algorithm) {
        return absl::InvalidArgumentError("'" + chosen[j] + "' and '" + chosen[i] + "' are both " +
                                          std::string(AlgorithmName(info->algorithm)) +
                                          ": choose one");
      }
    }
  }
  return absl::OkStatus();
}

RulesLimiter::ProtocolMaker StoreProtocols(const Stores& stores, ProtocolChoices chosen) {
  return
      [stores, chosen = std::move(chosen)](const Rule& rule) -> Result<std::unique_ptr<Protocol>> {
        Result<std::string_view> name = StoreProtocolFor(StoreOf(stores), rule, chosen);
        if (!name.ok()) return name.status();
        return MakeProtocol(*name, rule.ToPolicy(), stores);
      };
}

Status CheckStoreProtocol(const Stores& stores, const Rule& rule, const ProtocolChoices& chosen) {
  Result<std::string_view> name = StoreProtocolFor(StoreOf(stores), rule, chosen);
  if (!name.ok()) return name.status();
  return CheckProtocol(*name, rule.ToPolicy());
}

Status CheckStoreProtocols(const Stores& stores, const RuleSet& rules,
                           const ProtocolChoices& chosen) {
  for (const Rule& r : rules.rules()) {
    if (Status s = CheckStoreProtocol(stores, r, chosen); !s.ok()) return s;
  }
  return absl::OkStatus();
}

RulesLimiter::ProtocolMaker InProcessProtocols() {
  return [](const Rule& rule) {
    const Policy policy = rule.ToPolicy();
    return MakeProtocol("memory-" + std::string(AlgorithmName(policy.algorithm)), policy, Stores{});
  };
}

RulesLimiter::ProtocolMaker SharedInProcessLimiters::Maker() {
  return [this](const Rule& rule) -> Result<std::unique_ptr<Protocol>> {
    const Policy policy = rule.ToPolicy();
    if (const std::optional<std::string> problem = policy.Problem()) {
      return absl::InvalidArgumentError("the rule '" + rule.ToString() + "': " + *problem);
    }
    std::lock_guard lock(mutex_);
    for (const Entry& e : limiters_) {
      if (e.rule_id == rule.rule_id && e.policy == policy) {
        return std::make_unique<InProcessProtocol>(e.limiter);
      }
    }
    limiters_.push_back(
        Entry{rule.rule_id, policy, MakeInProcessLimiter(policy, max_keys_per_rule_)});
    return std::make_unique<InProcessProtocol>(limiters_.back().limiter);
  };
}

int64_t SharedInProcessLimiters::DropIdle(Instant now) {
  std::vector<std::shared_ptr<InProcessLimiter>> limiters;
  {
    std::lock_guard lock(mutex_);
    for (const Entry& e : limiters_) limiters.push_back(e.limiter);
  }
  int64_t dropped = 0;
  for (const std::shared_ptr<InProcessLimiter>& l : limiters) dropped += l->DropIdle(now);
  return dropped;
}

ServiceMetrics::Keys SharedInProcessLimiters::keys() {
  std::lock_guard lock(mutex_);
  ServiceMetrics::Keys keys;
  for (const Entry& e : limiters_) {
    keys.held += e.limiter->KeyCount();
    const InProcessLimiter::Evictions dropped = e.limiter->evictions();
    keys.dropped_idle += dropped.idle;
    keys.evicted_in_use += dropped.in_use;
  }
  return keys;
}

}  // namespace ratelab
