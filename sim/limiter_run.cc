#include "sim/limiter_run.h"

#include "impl/limiters/failure_policy.h"

namespace ratelab {

LimiterRun::StoreSet::StoreSet(const Clock& clock, Durability durability, KvStoreSource& source,
                               bool uses_kv)
    : docs(clock, durability) {
  Result<std::unique_ptr<KvBackend>> opened =
      uses_kv ? source.Open(clock, durability) : OpenMemoryKv(clock, durability);
  if (!opened.ok()) {
    status = opened.status();
    return;
  }
  kv = *std::move(opened);
  faulty_kv = std::make_unique<FaultyKv>(*kv, link);
}

void LimiterRun::StoreSet::Restart() {
  kv->Restart();
  docs.Restart();
}

LimiterRun::LimiterRun(const SimulationConfig& config, const LimiterSpec& spec,
                       const std::vector<FaultSpec>& faults, const std::vector<Arrival>& arrivals,
                       KvStoreSource& kv_source)
    : sim_(config, nullptr),
      stores_(sim_.clock(), spec.durability, kv_source, spec.Info()->store == "kv") {
  if (!stores_.status.ok()) {
    status_ = stores_.status;
    return;
  }
  handles_.kv = stores_.faulty_kv.get();
  sim_.SetFactory([this, &spec](int) {
    std::unique_ptr<Protocol> p = *spec.Make(handles_);
    if (spec.on_store_error.kind == FailurePolicy::Kind::kError) return p;
    return std::unique_ptr<Protocol>(
        std::make_unique<GuardedProtocol>(std::move(p), spec.policy, spec.on_store_error));
  });
  for (const FaultSpec& f : faults) Schedule(f, config.start + f.at);
  history_ = sim_.Run(arrivals);
  status_ = stores_.kv->failure();
}

void LimiterRun::Schedule(const FaultSpec& f, Instant at) {
  switch (f.kind) {
    case FaultSpec::Kind::kCrash:
      sim_.CrashNode(f.node, at, f.amount);
      break;
    case FaultSpec::Kind::kClockJump:
      sim_.JumpClock(f.node, at, f.amount);
      break;
    case FaultSpec::Kind::kLatencySpike:
      sim_.LatencySpike(at, f.amount, f.extra);
      break;
    case FaultSpec::Kind::kStoreOutage:
      sim_.At(at, [this] { stores_.link.Down(); });
      sim_.At(at + f.amount, [this] { stores_.link.Up(); });
      break;
    case FaultSpec::Kind::kStoreRestart:
      sim_.At(at, [this] {
        stores_.link.Down();
        stores_.Restart();
      });
      sim_.At(at + f.amount, [this] { stores_.link.Up(); });
      break;
  }
}

StateSize LimiterRun::State() {
  StateSize s = sim_.ProcessState();
  s += stores_.kv->Usage();
  s += stores_.docs.Usage();
  return s;
}

std::vector<MemoryDocs::Immortal> LimiterRun::NeverExpire() {
  std::vector<MemoryDocs::Immortal> out;
  for (const std::string& key : stores_.kv->KeysWithoutExpiry()) {
    out.push_back({"store key " + key, "no TTL", {key}});
  }
  for (MemoryDocs::Immortal& doc : stores_.docs.DocumentsWithoutExpiry()) {
    doc.name = "document " + doc.name;
    out.push_back(std::move(doc));
  }
  return out;
}

}  // namespace ratelab
