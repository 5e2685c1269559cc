// Decisions per second of each in-process limiter, at 1 000 and 1 000 000 keys with Zipf
// popularity, on one and two threads, beside a baseline: a bare absl::flat_hash_map GCRA on one
// thread, no locks, no Decision. Three more rows add to that bare loop one thing the limiter does
// each (its lock, its arithmetic with a whole Decision, a call), to read what each costs. The
// table printed last reads each result as a ratio to the baseline at the same key count.
//
// Run: build/bench/limiter_benchmark   (add --benchmark_min_time=2 for steadier figures)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "impl/limiters/in_process_algorithms.h"
#include "impl/limiters/in_process_limiter.h"
#include "impl/limiters/sharded_state_map.h"
#include "sim/random.h"

namespace ratelab {
namespace {

using std::chrono::microseconds;
using std::chrono::minutes;

constexpr size_t kSamples = size_t{1} << 20;  // Zipf draws replayed round-robin
const Instant kStart = FromUnixNanos(1'700'000'000'000'000'000);

// Keys and a fixed sequence of Zipf(0.99) draws over them, from seed 1.
struct Workload {
  std::vector<std::string> keys;
  std::vector<uint32_t> sequence;

  explicit Workload(int64_t n) {
    for (int64_t i = 0; i < n; ++i) keys.push_back("user:u" + std::to_string(i) + ":/api");
    std::vector<double> cdf(static_cast<size_t>(n));
    double total = 0;
    for (int64_t i = 0; i < n; ++i)
      cdf[static_cast<size_t>(i)] = total += 1.0 / std::pow(i + 1, 0.99);
    Random random(1);
    for (size_t i = 0; i < kSamples; ++i) {
      const double u = random.UniformDouble() * total;
      const auto rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      sequence.push_back(static_cast<uint32_t>(std::min<int64_t>(rank, n - 1)));
    }
  }
};

// Policies that admit often enough to exercise both paths: 100 per minute, or a burst of 100 then
// one per 600ms; the clock advances 1us per decision.
Policy BenchPolicy(Algorithm a) {
  return Describe(a).bucket ? Policy::Bucket(a, 100, std::chrono::milliseconds(600))
                            : Policy::Window(a, 100, minutes(1));
}

// Decisions a second, and the share admitted: the same counters in every row, as a CSV of the
// run (bench/turns) needs.
void Count(benchmark::State& state, int64_t admitted) {
  state.SetItemsProcessed(state.iterations());
  state.counters["admitted"] =
      benchmark::Counter(static_cast<double>(admitted) / static_cast<double>(state.iterations()));
}

void RunLimiter(benchmark::State& state, InProcessLimiter* limiter, const Workload* w) {
  size_t i = static_cast<size_t>(state.thread_index()) * (kSamples / 2);
  Instant now = kStart;
  int64_t admitted = 0;
  for (auto _ : state) {
    const std::string& key = w->keys[w->sequence[i++ & (kSamples - 1)]];
    now += microseconds(1);
    admitted += limiter->Decide(key, now, 1).allowed;
  }
  Count(state, admitted);
}

// What the bare loop does besides its lookup: nothing (the baseline), or one of the things the
// limiter does besides (each row apart, to read what it costs).
enum class Besides {
  kNothing,   // the baseline: the least a GCRA over string keys can do
  kSpinLock,  // the shard's lock taken and released around the lookup, uncontended
  kDecision,  // the limiter's own arithmetic (internal::Gcra::Decide, called out of line as the
              // limiter calls it), a whole Decision returned
  kCalled,    // the same lookup and arithmetic as the baseline's, behind a call not inlined
};

// The baseline's decision, in a function of its own.
[[gnu::noinline]] bool DecideCalled(absl::flat_hash_map<std::string, internal::Gcra::State>& tat,
                                    const std::string& key, int64_t now, int64_t interval,
                                    int64_t tolerance) {
  internal::Gcra::State& s = tat.find(absl::string_view(key.data(), key.size()))->second;
  const int64_t next = std::max(s.tat, now) + interval;
  if (next - now > tolerance) return false;
  s.tat = next;
  return true;
}

// The bare loop: one flat map of every key, no lock, no virtual call, no shards. (A template, so
// that each row's loop holds only its own work.)
template <Besides kBesides>
void RunBaseline(benchmark::State& state, const Workload* w) {
  // Gcra's State is the theoretical arrival time alone.
  absl::flat_hash_map<std::string, internal::Gcra::State> tat;
  for (const std::string& k : w->keys) tat.emplace(k, internal::Gcra::State{0});
  const Policy policy = BenchPolicy(Algorithm::kGcra);
  const internal::Gcra gcra(policy);
  internal::SpinLock lock;
  const int64_t interval = policy.window.count(), tolerance = policy.limit * interval;
  int64_t now = ToUnixNanos(kStart);
  size_t i = 0;
  int64_t admitted = 0;
  for (auto _ : state) {
    const std::string& key = w->keys[w->sequence[i++ & (kSamples - 1)]];
    now += 1000;
    if constexpr (kBesides == Besides::kCalled) {
      admitted += DecideCalled(tat, key, now, interval, tolerance);
      continue;
    }
    if constexpr (kBesides == Besides::kSpinLock) lock.lock();
    internal::Gcra::State& s = tat.find(absl::string_view(key.data(), key.size()))->second;
    if constexpr (kBesides == Besides::kDecision) {
      const Decision d = gcra.Decide(s, FromUnixNanos(now), 1);
      benchmark::DoNotOptimize(d);
      admitted += d.allowed;
    } else {
      const int64_t next = std::max(s.tat, now) + interval;
      if (next - now <= tolerance) {
        s.tat = next;
        ++admitted;
      }
    }
    if constexpr (kBesides == Besides::kSpinLock) lock.unlock();
  }
  benchmark::DoNotOptimize(admitted);
  Count(state, admitted);
}

// Prints what the console reporter prints, then a ratio table.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      const auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) rates_.emplace_back(r.benchmark_name(), it->second.value);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto keys_of = [](const std::string& name) {
      const size_t at = name.find("keys:");
      return name.substr(at, name.find('/', at) - at);
    };
    std::map<std::string, double> baseline;
    for (const auto& [name, rate] : rates_) {
      if (name.rfind("baseline_flat_hash_map_gcra/", 0) == 0) baseline[keys_of(name)] = rate;
    }
    std::printf("\n%-56s %14s %10s\n", "benchmark", "decisions/s", "x baseline");
    for (const auto& [name, rate] : rates_) {
      const auto base = baseline.find(keys_of(name));
      std::printf("%-56s %14.0f %10.2f\n", name.c_str(), rate,
                  base == baseline.end() ? 0.0 : rate / base->second);
    }
  }

 private:
  std::vector<std::pair<std::string, double>> rates_;
};

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) {
  using namespace ratelab;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::vector<std::unique_ptr<Workload>> workloads;
  std::vector<std::unique_ptr<InProcessLimiter>> limiters;
  for (int64_t keys : {int64_t{1000}, int64_t{1'000'000}}) {
    workloads.push_back(std::make_unique<Workload>(keys));
    const Workload* w = workloads.back().get();
    const std::string suffix = "/keys:" + std::to_string(keys);
    const std::pair<const char*, void (*)(benchmark::State&, const Workload*)> baselines[] = {
        {"baseline_flat_hash_map_gcra", RunBaseline<Besides::kNothing>},
        {"baseline_with_spin_lock", RunBaseline<Besides::kSpinLock>},
        {"baseline_with_decision", RunBaseline<Besides::kDecision>},
        {"baseline_called", RunBaseline<Besides::kCalled>}};
    for (const auto& baseline : baselines) {
      benchmark::RegisterBenchmark((baseline.first + suffix).c_str(),
                                   [w, run = baseline.second](benchmark::State& s) { run(s, w); })
          ->Threads(1)
          ->UseRealTime();
    }
    for (const AlgorithmInfo& a : Algorithms()) {
      limiters.push_back(MakeInProcessLimiter(BenchPolicy(a.id)));
      InProcessLimiter* limiter = limiters.back().get();
      for (const std::string& k : w->keys) limiter->Decide(k, kStart, 1);  // every key present
      benchmark::RegisterBenchmark(("memory-" + std::string(a.name) + suffix).c_str(),
                                   [limiter, w](benchmark::State& s) { RunLimiter(s, limiter, w); })
          ->Threads(1)
          ->Threads(2)
          ->UseRealTime();
    }
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
