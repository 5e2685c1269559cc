// Decisions per second through check --exec's protocol (docs/exec-protocol.md): one process per
// adapter, decisions sent in pipelined batches of 64 and then answered, beside the peer in the
// same run: ratelab's own in-process limiter of the same kind, called directly. The table
// printed last reads each adapter as a ratio to its peer.
//
// Run: build/bench/exec_throughput   (after scripts/test, which installs the adapters' libraries)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "impl/limiters/exec_protocol.h"
#include "impl/limiters/in_process_limiter.h"

namespace ratelab {
namespace {

constexpr int kBatch = 64;
constexpr int kKeys = 1000;
const Instant kStart = FromUnixNanos(1'767'225'600'000'000'000);

struct Subject {
  std::string name;     // its benchmark's
  std::string command;  // under adapters/
  Policy policy;
};

std::vector<std::string> Keys() {
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back("user:u" + std::to_string(i) + ":/api");
  return keys;
}

// The peer: the same algorithm in process, one decision a call, the clock 1us on each time.
void InProcess(benchmark::State& state, Policy policy) {
  const std::vector<std::string> keys = Keys();
  std::unique_ptr<InProcessLimiter> limiter = MakeInProcessLimiter(policy);
  Instant now = kStart;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(limiter->Decide(keys[i++ % keys.size()], now, 1));
    now += std::chrono::microseconds(1);
  }
  state.SetItemsProcessed(state.iterations());
}

// Through the process: `kBatch` decisions written together, then their answers read.
void ThroughExec(benchmark::State& state, const Subject& s) {
  Result<std::shared_ptr<ExecSession>> session = ExecSession::Start(
      std::string(RATELAB_SOURCE_DIR) + "/adapters/" + s.command, std::chrono::seconds(10));
  if (!session.ok()) {
    state.SkipWithError(std::string(session.status().message()).c_str());
    return;
  }
  const std::vector<std::string> keys = Keys();
  const int64_t limiter = (*session)->Open(s.policy);
  Instant now = kStart;
  size_t i = 0;
  std::vector<std::pair<int64_t, Instant>> sent(kBatch);
  for (auto _ : state) {
    for (auto& [id, at] : sent) {
      at = now += std::chrono::microseconds(1);
      id = (*session)->Send(limiter, keys[i++ % keys.size()], 1, at);
    }
    for (const auto& [id, at] : sent) {
      Result<Decision> d = (*session)->Answer(limiter, id, "", 1, at);
      if (!d.ok()) {
        state.SkipWithError(std::string(d.status().message()).c_str());
        return;
      }
    }
  }
  (*session)->Close(limiter);
  state.SetItemsProcessed(state.iterations() * kBatch);
}

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      const auto it = r.counters.find("items_per_second");
      if (r.run_type == Run::RT_Iteration && it != r.counters.end() && !r.error_occurred) {
        rates_[r.benchmark_name()] = it->second.value;
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-52s %12s %10s\n", "adapter (exec/NAME/ALGORITHM)", "decisions/s", "x peer");
    for (const auto& [name, rate] : rates_) {
      if (!name.starts_with("exec/")) continue;
      // exec/NAME/ALGORITHM/real_time: the peer is in_process/ALGORITHM.
      const size_t algorithm = name.find('/', 5) + 1;
      const std::string peer_name =
          "in_process/" + name.substr(algorithm, name.find('/', algorithm) - algorithm);
      const auto peer = rates_.find(peer_name);
      std::printf("%-52s %12.0f %10.4f\n", name.substr(0, name.rfind("/real_time")).c_str(), rate,
                  peer == rates_.end() ? 0.0 : rate / peer->second);
    }
  }

 private:
  std::map<std::string, double> rates_;
};

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) {
  using namespace ratelab;
  using std::chrono::seconds;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const Subject kSubjects[] = {
      {"awk-fixed-window", "awk/fixed-window",
       Policy::Window(Algorithm::kFixedWindow, 100, seconds(60))},
      {"python-limits", "python/limits_adapter.py",
       Policy::Window(Algorithm::kAnchoredWindow, 100, seconds(60))},
      {"node-rate-limiter-flexible", "node/adapter.js rate-limiter-flexible",
       Policy::Window(Algorithm::kAnchoredWindow, 100, seconds(60))},
      {"node-limiter", "node/adapter.js limiter",
       Policy::Bucket(Algorithm::kTokenBucket, 100, std::chrono::milliseconds(600))},
      {"go-xrate", "go/xrate",
       Policy::Bucket(Algorithm::kTokenBucket, 100, std::chrono::milliseconds(600))},
      {"java-guava", "java/guava-ratelimiter",
       Policy::Bucket(Algorithm::kTokenBucket, 100, std::chrono::milliseconds(600))},
  };
  for (const Subject& s : kSubjects) {
    const std::string algorithm(AlgorithmName(s.policy.algorithm));
    benchmark::RegisterBenchmark(("exec/" + s.name + "/" + algorithm).c_str(),
                                 [&s](benchmark::State& st) { ThroughExec(st, s); })
        ->UseRealTime();  // the process's time counts too
  }
  for (const Algorithm a :
       {Algorithm::kFixedWindow, Algorithm::kAnchoredWindow, Algorithm::kTokenBucket}) {
    const Policy p = Describe(a).bucket ? Policy::Bucket(a, 100, std::chrono::milliseconds(600))
                                        : Policy::Window(a, 100, seconds(60));
    benchmark::RegisterBenchmark(("in_process/" + std::string(AlgorithmName(a))).c_str(),
                                 [p](benchmark::State& st) { InProcess(st, p); });
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
