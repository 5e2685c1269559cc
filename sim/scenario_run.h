// Runs a scenario: every limiter on the same traffic, each in its own simulation from the same
// seed (limiter_run.h), its history then judged by the scenario's checks (checks.h).
#ifndef RATELAB_SIM_SCENARIO_RUN_H_
#define RATELAB_SIM_SCENARIO_RUN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/store/memory_kv.h"
#include "judge/checks.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/scenario.h"

namespace ratelab {

struct LimiterOutcome {
  std::string name;       // as the scenario names it: "kv-gcra-lua (fail-open)"
  std::string protocol;   // "memory-fixed-window"
  Policy policy;          // unset for a limiter by rules
  bool by_rules = false;  // enforced the scenario's rules (LimiterSpec::by_rules)
  History history;
  int64_t offered = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t unanswered = 0;  // lost in crashes, or sent while every node was down
  int64_t failed = 0;      // answered with the limiter's own error (HistoryEvent::failure)
  // The most one key had admitted in any span of the claim's window.
  int64_t max_in_any_window = 0;
  std::vector<CheckResult> checks;  // in the scenario's order
  // The kv keys found expired, in the order found, when the scenario kept them
  // (Scenario::keep_lapses).
  std::vector<KeyLapse> lapses;
  // The state left at the end of the run: in process memory (summed over the nodes) and in the
  // limiter's store (live keys).
  StateSize state;

  int64_t violation_count() const;
  // HistoryHash of `history`, worked out when asked (a search asks only of what it reports).
  uint64_t history_hash() const { return HistoryHash(history); }
  // "fixed-window 5 per 1m", or for a limiter by rules "the scenario's rules".
  std::string PolicyText() const;
  // The first request the limiter failed on, or null.
  const HistoryEvent* FirstFailure() const;
};

// What a run of a scenario from one seed made: each limiter's history, and its verdicts.
struct RunResult {
  std::string scenario;
  std::string description;
  uint64_t seed = 0;
  Instant start{};  // the scenario's start: time axes count from it
  bool buggify = false;
  std::optional<Duration> utc_offset;  // the scenario's zone (Scenario::utc_offset)
  std::vector<std::string> traffic;    // one line per generator
  int64_t limit = 0;                   // the claim: `limit` in any `window`
  Duration window{};
  bool claim_given = true;  // Scenario::claim_given: else only the measures' yardstick
  std::vector<LimiterOutcome> limiters;
  // Every fault of the run, scheduled or drawn by swarm mode, in words.
  std::vector<FaultWindow> faults;
  // What a reader must know to read the verdicts, e.g. that a restart forgot in-process counts.
  std::vector<std::string> notes;

  int64_t violation_count() const;
  // Requests the limiters failed on, over all of them.
  int64_t failure_count() const;
  // A hash of every limiter's history, in order: the run's fingerprint.
  uint64_t history_hash() const;
  // A hash of the traffic the limiters were offered (the same for each: TrafficHash of the
  // first's history); 0 without limiters.
  uint64_t traffic_hash() const {
    return limiters.empty() ? 0 : TrafficHash(limiters.front().history);
  }
};

// Told before each limiter's simulation starts: its name, its index and how many there are.
using RunProgress = std::function<void(const std::string& limiter, size_t index, size_t count)>;

// Runs `scenario` from `seed` (which derives latencies, routing, BUGGIFY and random traffic).
Result<RunResult> RunScenario(const Scenario& scenario, uint64_t seed,
                              const RunProgress& progress = nullptr);

// The most simulated requests one run takes unless told otherwise (--max-simulated): each costs
// about 400 bytes of history and a few microseconds, so some 8 GB and a minute on this
// project's 24 GiB, 2-core machine.
inline constexpr int64_t kDefaultMaxSimulated = 20'000'000;
// What a simulated request costs in memory: kRequestBytes with a generator's own keys (a
// boundary attack of 4 million arrivals over three limiters took 4.8 GB), and about
// kRequestBytesPerKeyByte more for each byte of user and endpoint past those (a replayed access
// log's addresses and paths of 110 bytes took 870 bytes a request).
inline constexpr double kRequestBytes = 400;
inline constexpr double kRequestBytesPerKeyByte = 4;
// About what a request whose user and endpoint hold `key_bytes` costs.
double RequestBytes(double key_bytes);
// OK when `scenario`'s run (its traffic, once for each limiter) is expected to simulate at most
// `max_simulated` requests; else InvalidArgument with the estimate and what to change. Checked
// before any work, so a scenario too large is refused at once rather than run out of memory.
Status CheckRunSize(const Scenario& scenario, int64_t max_simulated);

}  // namespace ratelab

#endif  // RATELAB_SIM_SCENARIO_RUN_H_
