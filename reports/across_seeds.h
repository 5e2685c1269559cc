// A comparison over seeds (compare --seeds A..B): the scenario run from every seed of the range,
// each limiter's numbers summarised as a median and a worst (SeedsSpreadReport), so a report
// says what the limiters do on this traffic, not what one seed's luck made of it.
#ifndef RATELAB_REPORTS_ACROSS_SEEDS_H_
#define RATELAB_REPORTS_ACROSS_SEEDS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "reports/report_model.h"
#include "sim/scenario.h"

namespace ratelab {

// Gathers the reports of a comparison's seeds, one at a time, in any order.
class SeedsSpread {
 public:
  // `traffic`: the run's TrafficHash (RunResult::traffic_hash), counted to tell whether the seeds
  // gave different traffic; none: not counted.
  void Add(const RunReport& run, std::optional<uint64_t> traffic = std::nullopt);
  // The limiters of the first report added, in its order, over every report added; `first` and
  // `last` name the range the seeds were drawn from.
  SeedsSpreadReport Finish(uint64_t first, uint64_t last) const;

 private:
  struct Sample {
    uint64_t seed;
    double value;
  };
  struct Limiter {
    std::string name;
    std::vector<CheckSeeds> checks;
    uint64_t seeds_over_claim = 0, seeds_failed = 0, first_failed_seed = 0;
    std::vector<Sample> over_admitted, false_denials, max_in_any_window, steps_per_decision,
        latency_p99_ms, state_bytes_per_key;
    std::vector<GoalSeeds> picked;  // in the goals' order
  };
  std::vector<Limiter> limiters_;
  uint64_t count_ = 0;
  std::set<uint64_t> traffics_;
  bool traffic_counted_ = true;  // every run added came with its traffic
};

// Whether a run broke a check or had a limiter fail: the run a comparison shows in full.
bool FoundSomething(const RunReport& run);

// Called after each seed with how many have run; returning false stops the comparison, which
// then summarises the seeds run.
using SeedsProgress = std::function<bool(uint64_t done)>;

// The report of `scenario` compared over the seeds first..last: in full, the run of the first
// seed that broke a check or had a limiter fail (of `first` when none did), with `across_seeds`
// summarising every seed run. `reproduce(seed)` is the command that makes a seed's run.
Result<RunReport> CompareAcrossSeeds(const Scenario& scenario, uint64_t first, uint64_t last,
                                     const std::function<std::string(uint64_t)>& reproduce,
                                     const SeedsProgress& progress);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_ACROSS_SEEDS_H_
