#include "sim/swarm.h"

namespace ratelab {

std::vector<FaultSpec> SwarmFaults(Random random, const Scenario& scenario, Duration span,
                                   bool has_store) {
  using std::chrono::milliseconds;
  std::vector<FaultSpec::Kind> kinds = {FaultSpec::Kind::kCrash, FaultSpec::Kind::kClockJump,
                                        FaultSpec::Kind::kLatencySpike};
  if (has_store) {
    kinds.push_back(FaultSpec::Kind::kStoreOutage);
    kinds.push_back(FaultSpec::Kind::kStoreRestart);
  }
  if (scenario.rules && !scenario.rules->changes.empty()) {
    kinds.push_back(FaultSpec::Kind::kListenDown);
  }
  const int64_t nodes = static_cast<int64_t>(scenario.nodes.size());
  const int64_t span_ns = std::max<int64_t>(span.count(), 1);
  std::vector<FaultSpec> out;
  for (int64_t i = 0, n = random.Uniform(1, 4); i < n; ++i) {
    FaultSpec f;
    f.kind = kinds[static_cast<size_t>(random.Uniform(0, static_cast<int64_t>(kinds.size())))];
    f.at = Duration(random.Uniform(0, span_ns));
    switch (f.kind) {
      case FaultSpec::Kind::kCrash:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(0, 30'000));
        break;
      case FaultSpec::Kind::kClockJump:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(-60'000, 60'001));
        break;
      case FaultSpec::Kind::kLatencySpike:
        f.amount = milliseconds(random.Uniform(100, 10'000));
        f.extra = milliseconds(random.Uniform(10, 500));
        break;
      case FaultSpec::Kind::kStoreOutage:
        f.amount = milliseconds(random.Uniform(100, 30'000));
        break;
      case FaultSpec::Kind::kStoreRestart:
        f.amount = milliseconds(random.Uniform(0, 5'000));
        break;
      case FaultSpec::Kind::kListenDown:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(100, 60'000));
        break;
      case FaultSpec::Kind::kStoreFailover:  // not drawn: only MemoryKv models a replica
      case FaultSpec::Kind::kStoreStall:     // not drawn: the same seeds, the same swarms
        break;
    }
    out.push_back(f);
  }
  return out;
}

std::vector<FaultSpec> FaultsNearRequests(Random& r, const std::vector<Arrival>& arrivals,
                                          Instant start, Duration w, int nodes, Duration round_trip,
                                          NearRequestFaults kinds) {
  using std::chrono::milliseconds;
  std::vector<FaultSpec> out;
  if (arrivals.empty()) return out;
  const auto near_a_request = [&] {
    const Arrival& a =
        arrivals[static_cast<size_t>(r.Uniform(0, static_cast<int64_t>(arrivals.size())))];
    return a.at - start + Duration(r.Uniform(0, round_trip.count()));
  };
  if (kinds.crash && r.Chance(0.7)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kCrash;
    f.node = static_cast<int>(r.Uniform(0, nodes));
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  if (kinds.restart && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreRestart;
    f.at = near_a_request();
    f.amount = milliseconds(r.Uniform(1, 50));
    out.push_back(f);
  }
  if (kinds.outage && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreOutage;
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  if (kinds.failover && r.Chance(0.7)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreFailover;
    f.at = near_a_request();
    f.amount = milliseconds(r.Uniform(1, 50));
    f.extra = Duration(r.Uniform(milliseconds(1).count(), (w / 2).count() + 2));
    out.push_back(f);
  }
  if (kinds.stall && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultSpec::Kind::kStoreStall;
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  return out;
}

}  // namespace ratelab
