// The search behind `ratelab check`, after FoundationDB's simulation testing: for each seed,
// draw one case (traffic from the simulator's generators, nodes, and faults placed just after
// requests, where they cut protocols between their steps), run it through the simulator, and
// judge it by the checks. The first case that breaks a check is shrunk while it still breaks the
// same invariant (fewer requests, fewer faults, a smaller limit): the minimal witness.
//
// Deterministic: the same seed draws the same case and the shrink takes the same steps, so a
// finding is replayed by its seed. Reads no clock; progress is reported through a callback.
#ifndef RATELAB_SIM_SEARCH_H_
#define RATELAB_SIM_SEARCH_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/memory_kv.h"
#include "judge/checks.h"
#include "model/history.h"
#include "model/named.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/protocol_under_test.h"
#include "sim/scenario.h"
#include "sim/seeds.h"
#include "sim/store_source.h"
#include "sim/traffic.h"

namespace ratelab {

// One candidate run: everything explicit, so shrinking can take parts away.
struct Case {
  Policy policy;
  Durability durability = Durability::kAlways;
  std::vector<Arrival> arrivals;
  std::vector<FaultSpec> faults;
  std::vector<NodeSpec> nodes;
  std::vector<CheckId> checks;
  Instant start = kDefaultScenarioStart;  // where the virtual clock starts
  // The longest a BUGGIFY delay holds one leg of a step (a request between its client reading
  // the clock and its call reaching the store, or an answer on its way back); unset:
  // DefaultMaxTransit of the policy.
  std::optional<Duration> max_transit;
};

// Half a second, or three of the policy's windows when that is less (so that a request now and
// then outlives a key whose TTL is a small multiple of a short window), and at least ten of a
// step's longest one-way latency: what a garbage-collection pause, a retry or a queue in front of
// the store holds a request for in production, and half the transit ratelab's own protocols pad
// their TTLs for (kTransitAllowance).
Duration DefaultMaxTransit(const Policy& policy);
// The case's bound, or the default for its policy.
Duration MaxTransitOf(const Case& c);

// The store latency of every step of a case, each way: 1ms plus up to 3ms.
inline constexpr Duration kSearchLatencyBase = std::chrono::milliseconds(1);
inline constexpr Duration kSearchLatencyJitter = std::chrono::milliseconds(3);

// The case of `seed`: `base` (its policy, durability and checks) with traffic, nodes and faults
// drawn. Traffic over three windows (a bucket's window: its fill time) from one or two users,
// each Poisson at three times the limit and, now and then, a burst of limit + 1 or a boundary
// attack; `concurrency` nodes, node 1's clock skewed when `faults` has skew; the other faults
// near requests (swarm.h, FaultsNearRequests).
Case Draw(const Case& base, uint64_t seed, const SearchFaults& faults, int concurrency);
// Adds to `c` two keys that see one request each, at instants drawn from `seed` over its span, from
// random streams after its own (the requests drawn before are as they were without them): the
// search's cases have them, so that a key written once must be freed too, and a limiter that sets
// a key's TTL only from its second request on leaks every key used once.
void AddKeysUsedOnce(Case& c, uint64_t seed);

// The scenario that runs case `c` of `protocol`: the case's traffic replayed on its nodes, steps
// taking kSearchLatencyBase plus up to kSearchLatencyJitter each way, BUGGIFY as the seed says.
Scenario CaseScenario(const std::shared_ptr<const ProtocolInfo>& protocol, const Case& c);

// A run of a case, as the search reads it.
struct CaseRun {
  std::optional<Violation> first;           // the first violation, by check order
  CheckId first_check = CheckId::kPromise;  // the check that found it
  History history;
  std::vector<FaultWindow> faults;
  // The first request the limiter answered with its own error (a script that failed, a reply
  // of another shape), if any: its verdicts cannot be trusted then.
  std::optional<HistoryEvent> failure;
  // The kv keys found expired, in the order found (MemoryKv's; none on a real server).
  std::vector<KeyLapse> lapses;
};
// Runs `c` from `seed` on `stores` (null: MemoryKv). An error when the run could not be made
// (a real store that failed).
Result<CaseRun> RunCase(const std::shared_ptr<const ProtocolInfo>& protocol, const Case& c,
                        uint64_t seed, const std::shared_ptr<StoreSource>& stores);

// Takes chunks of `c`'s requests away (halves, then quarters, down to single ones), each chunk
// whose removal `still_fails` accepts for what is left (never all of them); true when any was.
bool TakeAwayRequests(Case& c, const std::function<bool(const Case&)>& still_fails);

// Takes parts of `c` away while its run from `seed` still breaks `invariant`: chunks of requests
// (halves, then quarters, down to single ones), faults one at a time, and, only when
// `shrink_policy`, a smaller limit (when the protocol takes it): by default the witness keeps
// the policy the limiter was given. Then the transit: the least bound on a leg's delay at which
// it still breaks (halving; none at all when it needs none), and requests moved in time where
// that lets it break at a quarter less, so that the witness shows the least transit that breaks
// the limiter. At most `budget` runs.
Result<Case> Shrink(const std::shared_ptr<const ProtocolInfo>& protocol, Case c, uint64_t seed,
                    CheckId invariant, int budget, bool shrink_policy,
                    const std::shared_ptr<StoreSource>& stores);

struct SearchOptions {
  Case base;  // the policy, durability and checks; the rest is drawn
  SearchFaults faults;
  int concurrency = 3;
  SeedSpan seeds{1, 200, 1};            // the seeds searched, in order
  int shrink_budget = 2000;             // runs
  bool shrink_policy = false;           // may the shrink lower the limit (see Shrink)
  std::shared_ptr<StoreSource> stores;  // null: MemoryKv
  // Threads that run seeds side by side (1 to kMostJobs): the result is the same whatever
  // the number. More than one only on the embedded store (`stores` null or MemoryStores) with a
  // limiter that is not a process: seeds on a server would share its keys, and a process keeps one
  // state.
  int jobs = 1;
  // Once set (a user's Ctrl-C or SIGTERM), the search stops within the run it is in: a script
  // on MemoryKv (when `stores` is null) ends at once, and no run then is judged; none: it stops
  // only between seeds, when the progress callback says to.
  const std::atomic<int>* stop = nullptr;
};

// What a finding needed of transit: the request that took longest to reach the store after its
// client read the clock, and the bound under which the witness is clean.
struct TransitNeeded {
  int64_t request = 0;  // its id in the witness: the request held longest by a delay
  Duration took{};      // from its client reading the clock to its last step reaching the store
  Duration allowed{};   // the bound the search ran under (--max-transit)
  // The same requests with every delay shortened alike (the bound lowered) break nothing once
  // this request's transit is this.
  Duration clean{};
  // The key it found gone, when it did (on MemoryKv): the store key, the instant it was gone
  // from (the millisecond after its expiry's, which the store keeps it through), how long before
  // the request reached it, its time to live, and the request that set that (-1: none of the
  // witness).
  struct Gone {
    std::string key;
    Instant gone_from{};
    Duration before{};
    Duration ttl{};
    int64_t set_by = -1;
  };
  std::optional<Gone> gone;
};

// What a search found: the seed, the case it drew and the case it shrank that to, with the
// minimal case's run (its violation, and its history: every request of it is needed).
struct Finding {
  uint64_t seed = 0;
  Case drawn;
  Case minimal;
  CheckId check = CheckId::kPromise;  // that found the violation
  Violation violation;
  History witness;  // the minimal case's history; empty if the shrunk case stopped failing
  std::vector<FaultWindow> faults;
  // Set when the witness breaks its promise only with a request held in transit longer than
  // the step's ordinary latency (a BUGGIFY delay): the finding needs that much transit.
  std::optional<TransitNeeded> transit;
};

// A case on which the limiter answered with its own error.
struct LimiterFailure {
  uint64_t seed = 0;
  Case drawn;
  HistoryEvent request;  // the first it failed on; `failure` says how
};

struct SearchResult {
  uint64_t seeds_searched = 0;
  bool interrupted = false;  // the progress callback stopped it before the last seed
  std::optional<Finding> finding;
  // The search stops at the first seed whose run has a limiter failure, before looking for a
  // violation in it: that is a result of its own, never "nothing found".
  std::optional<LimiterFailure> failure;
  // Requests of the seeds searched that the limiter failed and its client decided itself
  // (--on-script-error admit or deny): said beside "nothing found", which is then about a
  // limiter that failed that often.
  uint64_t fallback_decisions = 0;
};

// OK when one seed's case for `policy` (its traffic grows with the limit or burst) is expected
// to simulate at most `max_simulated` requests; else InvalidArgument with the estimate and what to
// change. A limit of a billion is refused at once rather than searched forever.
Status CheckCaseSize(const Policy& policy, int64_t max_simulated);

// Told of each seed in order, on the calling thread: before it is run on one thread, or once its
// block ran (and every seed before it was clean) on several; answers whether to go on (false:
// the search stops there, interrupted, with what it found so far: nothing).
using SearchProgress = std::function<bool(uint64_t seed)>;

// A user's script that cannot answer one request at `at` on the store a search runs on (null:
// MemoryKv) is bad input, not a finding: TryOnce there. OK for a registry protocol.
Status TryOnItsStore(const std::shared_ptr<const ProtocolInfo>& protocol,
                     const std::shared_ptr<StoreSource>& stores, const Policy& policy, Instant at);

// Searches the seeds of `options` in order and shrinks the first finding; stops at the first
// limiter failure. Tries one request first on the store it runs on (TryOnce): a script that
// cannot answer it is an error, as is a run that could not be made.
Result<SearchResult> Search(const std::shared_ptr<const ProtocolInfo>& protocol,
                            const SearchOptions& options, const SearchProgress& progress = nullptr);

}  // namespace ratelab

#endif  // RATELAB_SIM_SEARCH_H_
