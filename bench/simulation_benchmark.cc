// Simulated decisions per second on one core: in-process GCRA, 10 000 Zipf users, 3 nodes,
// latency on every step, then the oracles over the whole history (conformance, any-window cap).
//
// Run: build/bench/simulation_benchmark
#include <benchmark/benchmark.h>

#include "impl/core/process_memory.h"
#include "impl/limiters/in_process_protocol.h"
#include "judge/oracles.h"
#include "sim/simulation.h"

namespace ratelab {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

void BM_SimulatedGcra10kUsers(benchmark::State& state) {
  const Instant start = FromUnixNanos(0);
  std::vector<std::unique_ptr<TrafficGenerator>> g;
  // 200 000 requests: one every 5us on average for one second of virtual time.
  g.push_back(std::make_unique<ZipfUsersTraffic>(10'000, 1.0, start, seconds(1), microseconds(5)));
  const std::vector<Arrival> arrivals = GenerateAll(g, Random(1));
  const Policy policy = Policy::Bucket(Algorithm::kGcra, 10, milliseconds(100));
  uint64_t seed = 0;
  for (auto _ : state) {
    SimulationConfig c;
    c.seed = ++seed;
    c.start = start;
    c.nodes = {NodeSpec{}, NodeSpec{}, NodeSpec{}};
    c.to_store = {microseconds(50), microseconds(100)};
    c.from_store = c.to_store;
    Simulation sim(c, [&](int) { return std::make_unique<InProcessProtocol>(policy); });
    const History h = sim.Run(arrivals);
    benchmark::DoNotOptimize(CheckBucketConformance(h, policy.limit, policy.window));
    benchmark::DoNotOptimize(CheckAnyWindowCap(h, policy.limit, seconds(1)));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(arrivals.size()));
  state.SetLabel("decisions/s = items_per_second");
}
BENCHMARK(BM_SimulatedGcra10kUsers)->Unit(benchmark::kMillisecond)->UseRealTime();

// The parts of the above on their own: the simulation without the oracles, and the oracles on
// its history.
History SimulateGcra(const std::vector<Arrival>& arrivals, uint64_t seed, const Policy& policy) {
  SimulationConfig c;
  c.seed = seed;
  c.start = FromUnixNanos(0);
  c.nodes = {NodeSpec{}, NodeSpec{}, NodeSpec{}};
  c.to_store = {microseconds(50), microseconds(100)};
  c.from_store = c.to_store;
  Simulation sim(c, [&](int) { return std::make_unique<InProcessProtocol>(policy); });
  return sim.Run(arrivals);
}

std::vector<Arrival> ZipfArrivals() {
  std::vector<std::unique_ptr<TrafficGenerator>> g;
  g.push_back(std::make_unique<ZipfUsersTraffic>(10'000, 1.0, FromUnixNanos(0), seconds(1),
                                                 microseconds(5)));
  return GenerateAll(g, Random(1));
}

void BM_SimulationOnly(benchmark::State& state) {
  const std::vector<Arrival> arrivals = ZipfArrivals();
  const Policy policy = Policy::Bucket(Algorithm::kGcra, 10, milliseconds(100));
  uint64_t seed = 0;
  for (auto _ : state) benchmark::DoNotOptimize(SimulateGcra(arrivals, ++seed, policy));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(arrivals.size()));
}
BENCHMARK(BM_SimulationOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OraclesOnly(benchmark::State& state) {
  const std::vector<Arrival> arrivals = ZipfArrivals();
  const Policy policy = Policy::Bucket(Algorithm::kGcra, 10, milliseconds(100));
  const History h = SimulateGcra(arrivals, 1, policy);
  for (auto _ : state) {
    benchmark::DoNotOptimize(CheckBucketConformance(h, policy.limit, policy.window));
    benchmark::DoNotOptimize(CheckAnyWindowCap(h, policy.limit, seconds(1)));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(h.size()));
}
BENCHMARK(BM_OraclesOnly)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) {
  ratelab::KeepFreedMemoryForReuse();  // as the ratelab binary does
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
