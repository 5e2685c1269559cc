#include "sim/sweep.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "sim/scenario_run.h"

namespace ratelab {

Status ForEachSeed(const Scenario& scenario, const SeedSpan& seeds, int jobs,
                   const SeedVisit& visit) {
  const uint64_t count = seeds.count();
  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  Status error;   // the first run that could not be made
  std::mutex mu;  // guards `error` and the calls to `visit`
  const auto worker = [&] {
    for (uint64_t i = next++; i < count && !stop.load(); i = next++) {
      Result<RunResult> run = RunScenario(scenario, seeds.at(i));
      std::lock_guard lock(mu);
      if (!run.ok()) {
        if (error.ok()) error = run.status();
        stop = true;
        continue;
      }
      if (!visit(i, *std::move(run))) stop = true;
    }
  };
  if (jobs <= 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
  }
  return error;
}

Result<SweepResult> RunSweep(const Scenario& scenario, const SeedSpan& seeds, int jobs,
                             const SweepProgress& progress) {
  const uint64_t count = seeds.count();
  SweepResult result;
  result.seeds.resize(count);
  std::vector<char> ran(count, 0);
  uint64_t done = 0, failing = 0;
  bool stopped = false;
  const Status s = ForEachSeed(scenario, seeds, jobs, [&](uint64_t i, RunResult&& run) {
    result.seeds[i] = {seeds.at(i), run.history_hash(), run.violation_count(), run.failure_count()};
    ran[i] = 1;
    if (result.seeds[i].violations > 0) ++failing;
    ++done;
    if (progress && !progress(done, failing)) stopped = true;
    return !stopped;  // runs already under way are still told, and counted
  });
  if (!s.ok()) return s;
  if (stopped && done < count) {
    result.interrupted = true;
    std::vector<SeedOutcome> run;
    for (uint64_t i = 0; i < count; ++i) {
      if (ran[i]) run.push_back(result.seeds[i]);
    }
    result.seeds = std::move(run);
  }
  result.seeds_with_violations = failing;
  for (const SeedOutcome& o : result.seeds) {
    result.seeds_with_failures += o.failures > 0;
    if ((o.violations > 0 || o.failures > 0) && !result.first_failing) {
      result.first_failing = o.seed;
    }
  }
  return result;
}

}  // namespace ratelab
