// The worst-case search behind `ratelab worst`: not whether a limiter breaks its claim, but by how
// much it can be made to. Cases are drawn as `ratelab check` draws them (search.h), then a hill
// climb mutates the best so far (requests moved, added, taken away; bursts, dense streams, quiet
// spans) and keeps a mutant that breaks the claim at least as far, with no more requests when
// only as far. At the end the best case is shrunk (requests taken away while it breaks the claim
// as far) into the witness.
//
// Deterministic: the search's own random stream comes from its seed, and each case runs from
// the seed it was drawn with (search.h), so the same options give the same result. Budgeted in
// runs; the progress callback can stop it sooner (a time budget), with what it found so far.
#ifndef RATELAB_SIM_WORST_H_
#define RATELAB_SIM_WORST_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "impl/core/status.h"
#include "model/history.h"
#include "model/named.h"
#include "model/policy.h"
#include "model/violation.h"
#include "sim/protocol_under_test.h"
#include "sim/search.h"
#include "sim/store_source.h"

namespace ratelab {

// What the search pushes on.
// The measures the search can push: the checks model/check_id.h judges on the worst case.
inline constexpr CheckId kWorstMeasures[] = {
    CheckId::kMostInWindow,       // the most one key has admitted in any span of W (windows)
    CheckId::kOverBucket,         // the most one key has admitted beyond B + floor(span / T)
    CheckId::kFalseDenialStreak,  // the longest run of one key's denials the model had room for
};
// "most-in-window", "over-bucket" or "false-denial-streak"; InvalidArgument naming them otherwise.
Result<CheckId> ParseWorstClaim(std::string_view text);
// The claim a policy is pushed on unless told: the most in any W, or over the bucket.
CheckId DefaultWorstClaim(const Policy& policy);

// The measure of `claim` on a history (as the limiter decided it: the clock and resolution it
// decides at), with a violation that shows it (its witness the requests that make the measure);
// a measure of 0 shows nothing.
struct WorstMeasure {
  int64_t value = 0;
  // What the claim allows where the value was measured: N; B + floor(span / T) for the span over
  // the bucket by the most; 0 for false denials (none are allowed).
  int64_t allowed = 0;
  std::optional<Violation> shown;
};
WorstMeasure MeasureWorst(const History& decided, const Policy& policy, CheckId claim);

struct WorstOptions {
  Case base;  // the policy and durability; traffic, nodes and faults are drawn and mutated
  CheckId claim = CheckId::kMostInWindow;
  SearchFaults faults;  // none: traffic and interleavings only
  // The most requests in flight at once (sent, not yet answered), as from that many clients each
  // waiting for its answer: a case that has more is not one of this concurrency. One node serves
  // them (in-process state is the node's).
  int concurrency = 1;
  uint64_t seed = 1;    // the search's: its draws and mutations
  int starts = 20;      // cases drawn before the climb (seeds seed .. seed + starts - 1)
  int64_t runs = 3000;  // the most cases run, shrink included
  std::shared_ptr<StoreSource> stores;  // null: MemoryKv
};

struct WorstResult {
  int64_t value = 0;      // the measure of the best case (0: the claim was never broken)
  int64_t allowed = 0;    // what the claim allows where it was measured (WorstMeasure::allowed)
  Case best;              // shrunk
  uint64_t run_seed = 0;  // the best case runs from this seed (its latencies, BUGGIFY)
  History history;        // the best case's, as decided
  std::optional<Violation> shown;
  int64_t runs = 0;                     // cases run
  int64_t found_at_run = 0;             // the run that first reached `value`
  bool stopped = false;                 // the progress callback stopped it before its budget
  std::optional<HistoryEvent> failure;  // the limiter answered with its own error: not judged
};

// Told after each run: the runs so far and the best measure; answers whether to go on.
using WorstProgress = std::function<bool(int64_t runs, int64_t best)>;

// Searches as above. An error when a run could not be made (a real store that failed).
Result<WorstResult> SearchWorst(const std::shared_ptr<const ProtocolInfo>& protocol,
                                const WorstOptions& options,
                                const WorstProgress& progress = nullptr);

}  // namespace ratelab

#endif  // RATELAB_SIM_WORST_H_
