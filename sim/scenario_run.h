// Runs a scenario: every limiter on the same traffic, each in its own simulation from the same
// seed, judged by the scenario's checks.
#ifndef RATELAB_SIM_SCENARIO_RUN_H_
#define RATELAB_SIM_SCENARIO_RUN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/scenario.h"

namespace ratelab {

// A fault of the run and the span it covers (an instant fault, a clock jump, has from == to).
struct FaultWindow {
  std::string what;  // "the store was unreachable at 12:00:10.000 for 20s"
  Instant from{};
  Instant to{};
  bool operator==(const FaultWindow&) const = default;
};

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
  // The state left at the end of the run: in process memory (summed over the nodes) and in the
  // limiter's store (live keys).
  StateSize state;

  int64_t violation_count() const;
};

struct Comparison {
  std::string scenario;
  std::string description;
  uint64_t seed = 0;
  Instant start{};  // the scenario's start: time axes count from it
  bool buggify = false;
  std::vector<std::string> traffic;  // one line per generator
  int64_t limit = 0;                 // the claim: `limit` in any `window`
  Duration window{};
  std::vector<LimiterOutcome> limiters;
  // Every fault of the run, scheduled or drawn by swarm mode, in words.
  std::vector<FaultWindow> faults;
  // What a reader must know to read the verdicts, e.g. that a restart forgot in-process counts.
  std::vector<std::string> notes;

  int64_t violation_count() const;
  // A hash of every limiter's history, in order: the run's fingerprint.
  uint64_t history_hash() const;
};

struct CheckInfo {
  std::string name;
  std::string summary;
};
// Every check a scenario (or `ratelab check --checks`) can name: "promise", the oracles (but
// boundary-burst, a ratio every run reports), and the run-level checks key-expiry and
// survives-restart.
std::vector<CheckInfo> Checks();
// InvalidArgument naming the checks there are, unless `name` is one.
Status CheckCheckName(const std::string& name);

// Told before each limiter's simulation starts: its name, its index and how many there are.
using RunProgress = std::function<void(const std::string& limiter, size_t index, size_t count)>;

// Runs `scenario` from `seed` (which derives latencies, routing, BUGGIFY and random traffic).
Result<Comparison> RunScenario(const Scenario& scenario, uint64_t seed,
                               const RunProgress& progress = nullptr);

}  // namespace ratelab

#endif  // RATELAB_SIM_SCENARIO_RUN_H_
