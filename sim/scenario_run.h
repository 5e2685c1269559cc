// Runs a scenario: every limiter on the same traffic, each in its own simulation from the same
// seed, judged by the scenario's checks.
#ifndef RATELAB_SIM_SCENARIO_RUN_H_
#define RATELAB_SIM_SCENARIO_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/scenario.h"

namespace ratelab {

struct CheckResult {
  std::string name;  // "promise" or an oracle's name
  std::vector<Violation> violations;
};

struct LimiterOutcome {
  std::string name;      // as the scenario names it: "kv-gcra-lua (fail-open)"
  std::string protocol;  // "memory-fixed-window"
  Policy policy;
  History history;
  uint64_t history_hash = 0;
  int64_t offered = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t unanswered = 0;  // lost in crashes, or sent while every node was down
  // The most one key had admitted in any span of the claim's window.
  int64_t max_in_any_window = 0;
  std::vector<CheckResult> checks;  // in the scenario's order

  int64_t violation_count() const;
};

struct Comparison {
  std::string scenario;
  uint64_t seed = 0;
  bool buggify = false;
  std::vector<std::string> traffic;  // one line per generator
  int64_t limit = 0;                 // the claim: `limit` in any `window`
  Duration window{};
  std::vector<LimiterOutcome> limiters;
  // Every fault of the run, scheduled or drawn by swarm mode, in words.
  std::vector<std::string> faults;
  // What a reader must know to read the verdicts, e.g. that a restart forgot in-process counts.
  std::vector<std::string> notes;

  int64_t violation_count() const;
  // A hash of every limiter's history, in order: the run's fingerprint.
  uint64_t history_hash() const;
};

// Runs `scenario` from `seed` (which derives latencies, routing, BUGGIFY and random traffic).
Result<Comparison> RunScenario(const Scenario& scenario, uint64_t seed);

}  // namespace ratelab

#endif  // RATELAB_SIM_SCENARIO_RUN_H_
