// Real concurrency (`ratelab stress`): T threads, each a limiter process with its own connection
// to a real Redis and its own instance of the protocol, send requests as fast as they are
// answered for a while, running the protocol's steps at once on their own thread as in
// production. Every request is recorded with the wall-clock instants it was sent and answered,
// and the checks that can judge such a history (checks.h, judge_over_intervals) judge it with
// the uncertainty it has: a decision took effect somewhere in [sent, answered], so only what is
// broken wherever each fell is reported. No false alarms; the racy protocols' over-admission
// still shows, since the racers are answered within the same few milliseconds.
//
// The one place where threads run protocols. Time comes from the Clock handed in.
#ifndef RATELAB_LIVE_STRESS_RUN_H_
#define RATELAB_LIVE_STRESS_RUN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/store/store_name.h"
#include "judge/checks.h"
#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/protocol_under_test.h"

namespace ratelab {

// The most requests a run records (each is held in memory until the end, a few hundred bytes):
// the threads stop there, and the result says so.
inline constexpr int64_t kStressMaxRequests = 5'000'000;

struct StressPlan {
  // The protocol under test: the registry's, a user's script or a user's process.
  std::shared_ptr<const ProtocolInfo> protocol;
  Policy policy;
  // Where its state is (StoreDriver::Serves): a Redis (private, running, a cluster) for a kv
  // protocol or script, PostgreSQL for a SQL protocol, or in process (memory): an in-process
  // protocol's, a user's process's, and the kv and document protocols' on a MemoryKv and a
  // MemoryDocs every thread shares.
  StoreName store;
  int threads = 4;
  Duration duration = std::chrono::seconds(3);
  int users = 1;  // requests go round the users' keys, so the threads contend for each
};

// InvalidArgument when `plan` cannot be run: a store that does not hold the protocol's state, a
// protocol stress has no model for (one that waits for a replica or admits with a delay),
// threads outside [1, 256], a duration outside (0, 1h], users outside [1, 1000000].
Status CheckStressPlan(const StressPlan& plan);

// The key whose admissions come nearest to (or beyond) the most the promise allows over the run.
struct BusiestKey {
  std::string key;
  int64_t admitted = 0;
  int64_t allowed = 0;
};

struct StressResult {
  Instant start{};     // when the threads started
  Duration elapsed{};  // the duration, or less when stopped at kStressMaxRequests
  bool stopped_at_cap = false;
  bool interrupted = false;  // `stop` said so before the duration was up
  History history;           // every request, by send time, numbered
  int64_t admitted = 0;
  int64_t denied = 0;
  Duration latency_p50{};  // from sent to answered
  Duration latency_p99{};
  BusiestKey busiest;
  CheckId promise = CheckId::kAnyWindowCap;  // the invariant the promise is judged as
  Duration resolution{};                     // the protocol's: histories are judged at it
  // The promise's violations, each witness with the events as they were (not floored).
  std::vector<Violation> violations;
  // Whether the answers are linearizable by the policy's model (its violation, if any, is not
  // among `violations`).
  LinearizabilityJudgement linearizability;
  // Denials no order explains on their own (JudgeFalseDenialsOverIntervals), found whatever the
  // linearizability search could decide: a search past its budget never hides them.
  std::vector<Violation> false_denials;
  // The first request the limiter answered with its own error (a script that failed, a reply of
  // another shape): the run stops there and is not judged.
  std::optional<HistoryEvent> failure;

  // Nothing found: the promise kept, no denial no order explains, and the answers linearizable
  // (or past the search's budget).
  bool clean() const {
    return violations.empty() && false_denials.empty() && !linearizability.violation;
  }
};

// Told about once a second while the threads run: how long, how many answered.
using StressProgress = std::function<void(Duration elapsed, int64_t answered)>;

// Asked every few milliseconds while the threads run: whether to stop them now (Ctrl-C).
using StressStop = std::function<bool()>;

// Starts the store (a private server) or checks that the given one is empty, runs the threads,
// empties the store, and judges the history (unless the limiter failed: see `failure`). Unavailable
// (or what the store said) when the store cannot be had or failed during the run: the history is
// then incomplete, and not judged. When `stop` says so, the threads stop early and what they
// recorded is judged as usual (`interrupted`).
Result<StressResult> RunStress(const StressPlan& plan, const Clock& clock,
                               const StressProgress& progress = nullptr,
                               const StressStop& stop = nullptr);

}  // namespace ratelab

#endif  // RATELAB_LIVE_STRESS_RUN_H_
