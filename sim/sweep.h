// A sweep: one scenario run from every seed of a range, several at a time, each reduced to its
// fingerprint and its count of violations (a history is dropped once judged, so a sweep of
// thousands of seeds holds a few numbers each).
#ifndef RATELAB_SIM_SWEEP_H_
#define RATELAB_SIM_SWEEP_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "impl/core/status.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "sim/seeds.h"

namespace ratelab {

struct SeedOutcome {
  uint64_t seed = 0;
  uint64_t history_hash = 0;
  int64_t violations = 0;
  int64_t failures = 0;  // requests a limiter answered with its own error
};

struct SweepResult {
  std::vector<SeedOutcome>
      seeds;                 // in seed order: every seed run (all of them, unless interrupted)
  bool interrupted = false;  // the progress callback stopped it before the last seed
  uint64_t seeds_with_violations = 0;
  uint64_t seeds_with_failures = 0;
  std::optional<uint64_t> first_failing;  // the lowest seed with a violation or a failure
};

// Told each run of a scenario from a seed of a span: its seed's index in the span, and the run;
// answers whether to go on (false: no more seeds are started).
using SeedVisit = std::function<bool(uint64_t index, RunResult&& run)>;

// Runs `scenario` from each seed of `seeds` on `jobs` threads and hands each run to `visit`, one
// call at a time (in seed order when `jobs` is 1): the one loop over seeds, which sweeps and the
// reports over seeds share. Once `visit` answers false no more seeds are started (runs already
// under way on other threads are still handed over). The first run that could not be made is
// the error, and no more seeds are started after it.
Status ForEachSeed(const Scenario& scenario, const SeedSpan& seeds, int jobs,
                   const SeedVisit& visit);

// Told after each seed: how many are done and how many of those failed; answers whether to go
// on (false: no more seeds are started, and the sweep ends with those run, interrupted).
using SweepProgress = std::function<bool(uint64_t done, uint64_t failing)>;

// Runs `scenario` from each seed of `seeds` on `jobs` threads (each run is independent and
// deterministic, so the result does not depend on `jobs`). The first run that could not be made
// is the error. `progress` is called from the threads, one call at a time.
Result<SweepResult> RunSweep(const Scenario& scenario, const SeedSpan& seeds, int jobs,
                             const SweepProgress& progress = nullptr);

}  // namespace ratelab

#endif  // RATELAB_SIM_SWEEP_H_
