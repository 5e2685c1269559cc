// Oracles: judges of a history against what an algorithm promises.
//
// Every oracle reads only the history (and, for the replay oracles, the reference model), so it
// is independent of the limiter under test. Each judges admissions at their `invoke` instant
// (the true time the client asked: what a limiter with an accurate clock decides on, so store
// latency never raises a false alarm, while skew, restarts and races still show), per key, and
// reports at most one violation per key (the first, with a minimal witness) so a long run's report
// stays readable; counts and maxima cover the whole history.
#ifndef RATELAB_JUDGE_ORACLES_H_
#define RATELAB_JUDGE_ORACLES_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "model/history.h"
#include "model/policy.h"
#include "model/violation.h"

namespace ratelab {

// At most `limit` units admitted per key in each aligned window [kW, (k+1)W), or with an
// `offset`, [offset(key) + kW, offset(key) + (k+1)W).
std::vector<Violation> CheckAlignedWindowCap(const History& h, int64_t limit, Duration window,
                                             const WindowOffset& offset = {});

// Whether a span of length W includes its far end: [s, s + W) or [s, s + W].
enum class WindowEdge { kHalfOpen, kClosed };

// At most `limit` units admitted per key in each anchored window: a window opens at the first
// admission (in invoke order), covers [start, start + W] (`edge` kHalfOpen: [start, start + W),
// for a history at a resolution where an instant in the far edge's tick may be after it), and
// the next opens at the first admission after it.
std::vector<Violation> CheckAnchoredWindowCap(const History& h, int64_t limit, Duration window,
                                              WindowEdge edge = WindowEdge::kClosed);

// At most `limit` units admitted per key in each window of its own grid: windows of W,
// [start, start + W), the first opened by its first admission, each following on from the
// last; an admission after a whole empty window opens a new first one (sliding-counter-anchored).
// A lost request that may have been admitted gets the benefit of the doubt, as above.
std::vector<Violation> CheckAnchoredGridCap(const History& h, int64_t limit, Duration window);

struct AnyWindowReport {
  // The most units admitted for one key in any half-open span [s, s + W); over `limit` it is the
  // boundary-burst ratio (a fixed window reaches 2).
  int64_t max_in_any_window = 0;
  std::vector<Violation> violations;  // spans holding more than `limit` (one per key)
};
// At most `limit` units admitted per key in any span of length `window` (half-open, or closed
// for sliding-log-closed); O(n log n) for the sort, O(n) for the two-pointer sweep.
AnyWindowReport CheckAnyWindowCap(const History& h, int64_t limit, Duration window,
                                  WindowEdge edge = WindowEdge::kHalfOpen);

// Token-bucket conformance: in any closed span [s, e], at most burst + floor((e - s) / interval)
// units admitted per key (on credit, the span's last admission counts 1 whatever its cost). O(n):
// a bucket that never denies is run over the admissions; it goes below what an admission needs
// exactly when some span breaks the bound, and that span starts where the bucket was last full.
std::vector<Violation> CheckBucketConformance(const History& h, int64_t burst, Duration interval,
                                              BucketCredit credit = BucketCredit::kNone);

// Replays the history into the reference model of `policy` (admissions forced in, in invoke
// order) and flags each denial the model would have admitted: "no false denials". A request
// lost after its steps reached the store counts as admitted (it may have consumed). A store that
// took a request after a newer one (a retry after NOSCRIPT, a slow node) decided it on the newer
// state: a denial is flagged only when the model, replayed in the store's order too (each
// request still at its own instant), also has room. An admission made to wait (a pacer's,
// Decision::wait; judged at its instant plus the wait, as AsDecided puts it) is flagged when it
// waited more than `wait_tolerance` longer than the model needed: the model had room for it that
// much earlier, with every admission before it as replayed (a key with a lost request before it,
// which may have held a slot until an unknown instant, is not judged so).
std::vector<Violation> CheckFalseDenials(const History& h, const Policy& policy,
                                         Duration wait_tolerance = Duration(1));

// The longest run of one key's denials (in invoke order, nothing answered between them) that
// CheckFalseDenials' replay flags, every one: its length is the witness's size; nullopt when no
// denial is false. For the anchored algorithms, a key with a lost request is not judged.
std::optional<Violation> LongestFalseDenialStreak(const History& h, const Policy& policy);

// The most units one key had admitted beyond burst + floor((e - s) / interval) in any closed
// span [s, e]: 0 when the bucket conforms (CheckBucketConformance's bucket, let go below empty).
int64_t MostOverBucket(const History& h, int64_t burst, Duration interval,
                       BucketCredit credit = BucketCredit::kNone);

// Replays as above and flags each denial whose retry_after differs from the model's exact wait
// given the same admissions: "exact Retry-After". A limiter that answers in whole `unit`s (an
// HTTP Retry-After header: whole seconds) is held to the exact wait rounded up to one: never
// earlier than the exact wait, and less than a unit later. A limiter that decides at
// `resolution` (a script on a millisecond clock, whose waits are floating point) is held to the
// exact wait within less than one of it, either way: never finer than it can tell.
std::vector<Violation> CheckRetryAfter(const History& h, const Policy& policy,
                                       Duration unit = Duration(1),
                                       Duration resolution = Duration(1));

// What `policy`'s algorithm itself promises, checked on `h`: the aligned-window cap for the
// fixed window and sliding counter, the any-window cap for the sliding logs (closed spans for
// the closed one), bucket conformance for the token buckets and GCRA, the anchored-window cap
// for the anchored window, the anchored-grid cap for the anchored sliding counter. For a history
// at a `resolution` coarser than a nanosecond (times floored to its ticks), a closed window is
// judged half-open: an admission in the same tick as its far edge may have come after the edge,
// and gets that benefit of the doubt.
std::vector<Violation> CheckPromise(const History& h, const Policy& policy,
                                    Duration resolution = Duration(1));
// The invariant that CheckPromise (and CheckPromiseOverIntervals) checks for `algorithm`, as its
// violations name it: "aligned-window-cap", "any-window-cap", "bucket-conformance",
// "anchored-window-cap" or "anchored-grid-cap".
CheckId PromiseInvariant(Algorithm algorithm);

// Histories of real concurrency (`ratelab stress`): wall-clock times, and a decision that took
// effect somewhere in [invoke, complete], no one knows where. This reports only what is broken
// wherever each decision fell: admissions of one key, each answered inside one span, that are
// more than `policy`'s promise allows in that span (for the fixed window and the counter, one
// aligned window; for the log, a span shorter than W; for the buckets, B + floor(span / T)).
// Never a false alarm; the price is that a breach narrower than the answers' latency is missed.
// The buckets' spans are searched up to `horizon` long (over-admission from races shows within
// a short span); the work is about the admissions times those within `horizon` of each. The
// anchored window's windows move with the unknown instants, so it is held to what any two of
// them allow, 2N in any span of W, and to N in the one window a quiet key's next admission opens:
// after a spell in which every window that may have opened has closed, or, where the keys are
// `fresh` (no traffic before `h`), at a key's first request.
std::optional<std::vector<Violation>> CheckPromiseOverIntervals(const History& h,
                                                                const Policy& policy,
                                                                Duration horizon, bool fresh);

// Every event of `h`, by key in key order, each key's in (invoke, id) order: the order the
// oracles read a history in, for other readers (the reports' metrics). Linear with the
// simulator's key ids (HistoryEvent::key_id), else a hash and a sort of the keys.
std::vector<const HistoryEvent*> ByKeyInInvokeOrder(const History& h);

// The most `policy` lets one key be admitted between `from` and `to` (for a run's summary: a
// correct limiter never exceeds it, whatever the traffic): B + floor(span / T) for the buckets,
// N per aligned window touched for the fixed window and the counter (N per window any offset can
// make touch it, with a window offset), N per W started for the logs; -1 for the anchored window
// and the anchored counter.
int64_t MostAdmittedBetween(const Policy& policy, Instant from, Instant to);

}  // namespace ratelab

#endif  // RATELAB_JUDGE_ORACLES_H_
