#include "reports/across_seeds.h"

#include <algorithm>

#include "reports/goals.h"
#include "reports/run_report.h"
#include "sim/scenario_run.h"
#include "sim/sweep.h"

namespace ratelab {

namespace {

// The median of the samples, and the largest with the first seed that gave it.
SpreadReport Spread(std::vector<double> values, const std::vector<uint64_t>& seeds) {
  SpreadReport s;
  if (values.empty()) return s;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == 0 || values[i] > s.worst || (values[i] == s.worst && seeds[i] < s.worst_seed)) {
      s.worst = values[i];
      s.worst_seed = seeds[i];
    }
  }
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  s.median = values[mid];
  if (values.size() % 2 == 0) {
    s.median = (s.median + *std::max_element(values.begin(), values.begin() + mid)) / 2;
  }
  return s;
}

template <typename Sample>
SpreadReport SpreadOf(const std::vector<Sample>& samples) {
  std::vector<double> values;
  std::vector<uint64_t> seeds;
  for (const Sample& s : samples) {
    values.push_back(s.value);
    seeds.push_back(s.seed);
  }
  return Spread(std::move(values), seeds);
}

// Counts one more seed, `seed`, in `seeds`, keeping in `first` the smallest counted (seed 0 is a
// seed like any other, so `first` means nothing while `seeds` is 0).
void CountSeed(uint64_t seed, uint64_t& seeds, uint64_t& first) {
  first = seeds == 0 ? seed : std::min(first, seed);
  ++seeds;
}

}  // namespace

void SeedsSpread::Add(const RunReport& run, std::optional<uint64_t> traffic) {
  ++count_;
  if (traffic) {
    traffics_.insert(*traffic);
  } else {
    traffic_counted_ = false;
  }
  for (const LimiterReport& l : run.limiters) {
    auto it = std::find_if(limiters_.begin(), limiters_.end(),
                           [&](const Limiter& known) { return known.name == l.name; });
    if (it == limiters_.end()) {
      it = limiters_.insert(limiters_.end(), Limiter{});
      it->name = l.name;
    }
    Limiter& to = *it;
    for (const CheckCount& c : l.checks) {
      auto check = std::find_if(to.checks.begin(), to.checks.end(),
                                [&](const CheckSeeds& known) { return known.check == c.check; });
      if (check == to.checks.end()) {
        check = to.checks.insert(to.checks.end(), CheckSeeds{});
        check->check = c.check;
      }
      if (c.violations > 0) CountSeed(run.seed, check->seeds, check->first_seed);
    }
    to.seeds_over_claim += l.ClaimBroken(run.claim) > 0;
    if (l.failed > 0) CountSeed(run.seed, to.seeds_failed, to.first_failed_seed);
    const auto add = [&](std::vector<Sample>& samples, double value) {
      samples.push_back({run.seed, value});
    };
    add(to.over_admitted, static_cast<double>(l.metrics.over_admitted));
    add(to.false_denials, static_cast<double>(l.metrics.false_denials));
    add(to.max_in_any_window, static_cast<double>(l.max_in_any_window));
    add(to.steps_per_decision, l.metrics.steps_per_decision);
    if (l.metrics.latency_ms) add(to.latency_p99_ms, l.metrics.latency_ms->p99);
    if (l.metrics.state_bytes_per_key) {
      add(to.state_bytes_per_key, *l.metrics.state_bytes_per_key);
    }
  }
  for (const Goal& g : Goals()) {
    const GoalStanding standing = Stand(g, run);
    if (!standing.picked()) continue;
    Limiter& best = *std::find_if(limiters_.begin(), limiters_.end(), [&](const Limiter& known) {
      return known.name == standing.best->name;
    });
    auto goal = std::find_if(best.picked.begin(), best.picked.end(),
                             [&](const GoalSeeds& known) { return known.goal == g.goal; });
    if (goal == best.picked.end()) goal = best.picked.insert(best.picked.end(), {g.goal, 0});
    ++goal->seeds;
  }
}

SeedsSpreadReport SeedsSpread::Finish(uint64_t first, uint64_t last) const {
  SeedsSpreadReport out{first, last, count_, {}};
  out.traffics = traffic_counted_ ? traffics_.size() : 0;
  for (const Limiter& l : limiters_) {
    LimiterSpreadReport s;
    s.name = l.name;
    s.checks = l.checks;
    s.seeds_over_claim = l.seeds_over_claim;
    s.seeds_failed = l.seeds_failed;
    s.first_failed_seed = l.first_failed_seed;
    s.over_admitted = SpreadOf(l.over_admitted);
    s.false_denials = SpreadOf(l.false_denials);
    s.max_in_any_window = SpreadOf(l.max_in_any_window);
    s.steps_per_decision = SpreadOf(l.steps_per_decision);
    if (!l.latency_p99_ms.empty()) s.latency_p99_ms = SpreadOf(l.latency_p99_ms);
    if (!l.state_bytes_per_key.empty()) s.state_bytes_per_key = SpreadOf(l.state_bytes_per_key);
    s.picked = l.picked;
    out.limiters.push_back(std::move(s));
  }
  return out;
}

bool FoundSomething(const RunReport& run) {
  return std::any_of(run.limiters.begin(), run.limiters.end(), [](const LimiterReport& l) {
    return l.failed > 0 || std::any_of(l.checks.begin(), l.checks.end(),
                                       [](const CheckCount& c) { return c.violations > 0; });
  });
}

Result<RunReport> CompareAcrossSeeds(const Scenario& scenario, uint64_t first, uint64_t last,
                                     const std::function<std::string(uint64_t)>& reproduce,
                                     const SeedsProgress& progress) {
  SeedsSpread spread;
  std::optional<RunReport> shown;
  // One seed at a time, in order: the report shows the first seed that found something.
  const Status s =
      ForEachSeed(scenario, {first, last, 1}, /*jobs=*/1, [&](uint64_t index, RunResult&& run) {
        RunReport report = MakeRunReport(run);
        spread.Add(report, run.traffic_hash());
        if (!shown || (!FoundSomething(*shown) && FoundSomething(report))) {
          report.reproduce = reproduce(run.seed);
          shown = std::move(report);
        }
        return progress(index + 1);
      });
  if (!s.ok()) return s;
  shown->across_seeds = spread.Finish(first, last);
  return *std::move(shown);
}

}  // namespace ratelab
