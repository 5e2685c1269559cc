#include "sim/sweep.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "sim/scenario_run.h"

namespace ratelab {

Result<SweepResult> RunSweep(const Scenario& scenario, const SeedSpan& seeds, int jobs,
                             const SweepProgress& progress) {
  const uint64_t count = seeds.count();
  SweepResult result;
  result.seeds.resize(count);
  std::atomic<uint64_t> next{0}, done{0}, failing{0};
  std::atomic<bool> stop{false};
  std::vector<char> ran(count, 0);  // each written by the one thread that ran its seed
  Status error;                     // the first run that could not be made
  std::mutex mu;                    // guards `error` and the progress calls
  const auto worker = [&] {
    for (uint64_t i = next++; i < count && !stop.load(); i = next++) {
      Result<RunResult> c = RunScenario(scenario, seeds.at(i));
      if (!c.ok()) {
        std::lock_guard lock(mu);
        if (error.ok()) error = c.status();
        continue;
      }
      result.seeds[i] = {seeds.at(i), c->history_hash(), c->violation_count(), c->failure_count()};
      ran[i] = 1;
      if (result.seeds[i].violations > 0) ++failing;
      const uint64_t finished = ++done;
      if (progress) {
        std::lock_guard lock(mu);
        if (!progress(finished, failing.load())) stop = true;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (!error.ok()) return error;
  if (stop.load() && done.load() < count) {
    result.interrupted = true;
    std::vector<SeedOutcome> run;
    for (uint64_t i = 0; i < count; ++i) {
      if (ran[i]) run.push_back(result.seeds[i]);
    }
    result.seeds = std::move(run);
  }
  result.seeds_with_violations = failing.load();
  for (const SeedOutcome& s : result.seeds) {
    result.seeds_with_failures += s.failures > 0;
    if ((s.violations > 0 || s.failures > 0) && !result.first_failing) {
      result.first_failing = s.seed;
    }
  }
  return result;
}

}  // namespace ratelab
