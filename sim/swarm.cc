#include "sim/swarm.h"

namespace ratelab {

std::vector<FaultSpec> SwarmFaults(Random random, const Scenario& scenario, Duration span,
                                   bool has_store) {
  using std::chrono::milliseconds;
  std::vector<FaultKind> kinds = {FaultKind::kCrash, FaultKind::kClockJump,
                                  FaultKind::kLatencySpike};
  if (has_store) {
    kinds.push_back(FaultKind::kStoreOutage);
    kinds.push_back(FaultKind::kStoreRestart);
  }
  if (scenario.rules && !scenario.rules->changes.empty()) {
    kinds.push_back(FaultKind::kListenDown);
  }
  const int64_t nodes = static_cast<int64_t>(scenario.nodes.size());
  const int64_t span_ns = std::max<int64_t>(span.count(), 1);
  std::vector<FaultSpec> out;
  for (int64_t i = 0, n = random.Uniform(1, 4); i < n; ++i) {
    FaultSpec f;
    f.kind = kinds[static_cast<size_t>(random.Uniform(0, static_cast<int64_t>(kinds.size())))];
    f.at = Duration(random.Uniform(0, span_ns));
    switch (f.kind) {
      case FaultKind::kCrash:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(0, 30'000));
        break;
      case FaultKind::kClockJump:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(-60'000, 60'001));
        break;
      case FaultKind::kLatencySpike:
        f.amount = milliseconds(random.Uniform(100, 10'000));
        f.extra = milliseconds(random.Uniform(10, 500));
        break;
      case FaultKind::kStoreOutage:
        f.amount = milliseconds(random.Uniform(100, 30'000));
        break;
      case FaultKind::kStoreRestart:
        f.amount = milliseconds(random.Uniform(0, 5'000));
        break;
      case FaultKind::kListenDown:
        f.node = static_cast<int>(random.Uniform(0, nodes));
        f.amount = milliseconds(random.Uniform(100, 60'000));
        break;
      case FaultKind::kStoreFailover:  // not drawn: only MemoryKv models a replica
      case FaultKind::kStoreStall:     // not drawn: the same seeds, the same swarms
      case FaultKind::kClockSkew:      // a node's clock_offset, no FaultSpec
        break;
    }
    out.push_back(f);
  }
  return out;
}

std::vector<FaultSpec> FaultsNearRequests(Random& r, const std::vector<Arrival>& arrivals,
                                          Instant start, Duration w, int nodes, Duration round_trip,
                                          const SearchFaults& kinds) {
  using std::chrono::milliseconds;
  std::vector<FaultSpec> out;
  if (arrivals.empty()) return out;
  const auto near_a_request = [&] {
    const Arrival& a =
        arrivals[static_cast<size_t>(r.Uniform(0, static_cast<int64_t>(arrivals.size())))];
    return a.at - start + Duration(r.Uniform(0, round_trip.count()));
  };
  if (kinds.contains(FaultKind::kCrash) && r.Chance(0.7)) {
    FaultSpec f;
    f.kind = FaultKind::kCrash;
    f.node = static_cast<int>(r.Uniform(0, nodes));
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  if (kinds.contains(FaultKind::kStoreRestart) && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultKind::kStoreRestart;
    f.at = near_a_request();
    f.amount = milliseconds(r.Uniform(1, 50));
    out.push_back(f);
  }
  if (kinds.contains(FaultKind::kStoreOutage) && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultKind::kStoreOutage;
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  if (kinds.contains(FaultKind::kStoreFailover) && r.Chance(0.7)) {
    FaultSpec f;
    f.kind = FaultKind::kStoreFailover;
    f.at = near_a_request();
    f.amount = milliseconds(r.Uniform(1, 50));
    f.extra = Duration(r.Uniform(milliseconds(1).count(), (w / 2).count() + 2));
    out.push_back(f);
  }
  if (kinds.contains(FaultKind::kStoreStall) && r.Chance(0.5)) {
    FaultSpec f;
    f.kind = FaultKind::kStoreStall;
    f.at = near_a_request();
    f.amount = Duration(r.Uniform(milliseconds(1).count(), (w / 10).count() + 2));
    out.push_back(f);
  }
  return out;
}

}  // namespace ratelab
