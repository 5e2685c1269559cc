#include "sim/scenario.h"

namespace ratelab {

std::string LimiterSpec::ProtocolFor(const Policy& p) const {
  if (!protocol) return "memory-" + std::string(AlgorithmName(p.algorithm));
  return protocol->name;
}

const ProtocolInfo* LimiterSpec::Info() const {
  return protocol ? protocol.get() : FindProtocol("memory-fixed-window");
}

Status LimiterSpec::Check() const {
  if (by_rules) return absl::OkStatus();
  if (!protocol) return absl::InvalidArgumentError("a limiter names no protocol");
  return protocol->Suits(policy);
}

Result<std::unique_ptr<Protocol>> LimiterSpec::Make(const Policy& p, const Stores& stores) const {
  if (!protocol) return MakeProtocol(ProtocolFor(p), p, stores);
  return protocol->Instance(p, stores);
}

std::string LimiterSpec::DisplayName() const {
  if (!name.empty()) return name;
  const std::string http = via_http ? " via http" : "";
  if (by_rules) return (protocol ? protocol->name + " by rules" : "rules in process") + http;
  if (via_http) return ProtocolName() + http;
  std::string out = ProtocolName();
  const ProtocolInfo* info = Info();
  if (info == nullptr || info->store == StoreKind::kMemory) return out;
  std::vector<std::string> extras;
  if (on_store_error.kind != FailurePolicy::Kind::kError) {
    extras.emplace_back(FailurePolicyName(on_store_error.kind));
  }
  if (durability != Durability::kAlways) {
    extras.push_back("durability " + std::string(DurabilityName(durability)));
  }
  for (size_t i = 0; i < extras.size(); ++i) out += (i == 0 ? " (" : ", ") + extras[i];
  return extras.empty() ? out : out + ")";
}

std::string FaultSpec::Describe(Instant start) const {
  const std::string when = " at " + FormatInstant(start + at);
  switch (kind) {
    case FaultKind::kCrash:
      return "node " + std::to_string(node) + " crashed" + when + " (down " +
             FormatDuration(amount) + ")";
    case FaultKind::kClockJump:
      return "node " + std::to_string(node) + "'s clock jumped by " + FormatDuration(amount) + when;
    case FaultKind::kStoreRestart:
      return "the store restarted" + when + " (down " + FormatDuration(amount) + ")";
    case FaultKind::kStoreOutage:
      return "the store was unreachable" + when + " for " + FormatDuration(amount);
    case FaultKind::kLatencySpike:
      return "store latency rose by " + FormatDuration(extra) + " per leg" + when + " for " +
             FormatDuration(amount);
    case FaultKind::kListenDown:
      return "node " + std::to_string(node) + "'s listen connection was down" + when + " for " +
             FormatDuration(amount);
    case FaultKind::kStoreFailover:
      return "the store failed over to its replica" + when + ", the replica " +
             FormatDuration(extra) + " behind (down " + FormatDuration(amount) + ")";
    case FaultKind::kClockSkew:  // a node's clock_offset, for the whole run
      return "node " + std::to_string(node) + "'s clock was off by " + FormatDuration(amount);
    case FaultKind::kStoreStall:
      return "the store stalled" + when + " for " + FormatDuration(amount) +
             " (what it was sent meanwhile ran when it resumed)";
  }
  return "?";
}

Status CheckStoreIsUsed(const Scenario& s, const StoreName& store) {
  if (store.kind == StoreName::Kind::kMemory) return absl::OkStatus();
  const StoreKind needs = store.postgres() ? StoreKind::kSql : StoreKind::kKv;
  std::string names;
  for (const LimiterSpec& l : s.limiters) {
    const ProtocolInfo* info = l.Info();
    if (info == nullptr || info->store == needs) return absl::OkStatus();
    names += (names.empty() ? "" : ", ") + l.DisplayName() + " (" +
             std::string(StoreKindName(info->store)) + ")";
  }
  return absl::InvalidArgumentError(
      "store " + store.ToString() + ": no limiter of " + s.name + " keeps its state there (" +
      names + "), so the run would be the same without it; it takes a " +
      (store.postgres() ? "sql-*" : "kv-*") + " protocol (ratelab list protocols)");
}

}  // namespace ratelab
