// Linearizability of a concurrent history of one rate limiter, key by key, in the style of
// Porcupine (Wing and Gong's search, with Lowe's memo of states seen).
//
// A call is known by its interval: sent at `invoke`, answered at `complete`. The history is
// linearizable if the calls of each key can be put in some order, each taking effect at an
// instant inside its interval (instants non-decreasing in that order), such that the sequential
// reference model, fed that order at those instants, answers every call as it was answered. A call
// with no answer may have taken effect (at any instant after it was sent) or not.
//
// The instant matters: a window edge or a refill can fall inside an interval, so a call may have
// been decided either side of it. The limiter reads its clock at some instant of the interval (the
// store's clock as it runs the call, or the client's) and sees it at its resolution (floor(t /
// resolution) * resolution); the search tries every instant it can have seen, and keeps one of
// those that leave the model in the same state with the same answer (the earliest, which leaves the
// most room to the calls after). Where a call's interval holds too many such instants (a window
// opened at a request's own instant, on a nanosecond clock), it tries those a linearization can
// need: whole windows and a few ticks from a call's first instant (linearizability.cc,
// MakePoints). So a verdict is exact for a limiter with that clock resolution. A bucket (token
// bucket, GCRA) is searched a second way too, its instants kept as bounds on one another rather
// than tried (bucket_zones.h), each way with half the budget. A search that outgrows its budget of
// states answers "unknown", never a verdict it has not shown.
#ifndef RATELAB_JUDGE_LINEARIZABILITY_H_
#define RATELAB_JUDGE_LINEARIZABILITY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/decision.h"
#include "model/history.h"
#include "model/named.h"
#include "model/policy.h"
#include "model/time.h"

namespace ratelab {

// One call on one key.
struct LinearOp {
  Instant invoke{};
  Instant complete{};  // when `answer` came; unused without one
  int64_t cost = 1;
  std::optional<Decision> answer;  // none: no answer came (it may or may not have taken effect)
};

struct LinearizabilityOptions {
  // The limiter's clock: an effect instant is seen as a multiple of it.
  Duration resolution = std::chrono::milliseconds(1);
  // What of an answer must be the model's: whether it was allowed always; Remaining and the wait
  // when asked (a wait rounded up to `retry_after_unit` when that is not zero, as Retry-After's
  // whole seconds are).
  bool remaining = false;
  bool retry_after = false;
  Duration retry_after_unit{};
  // Whether the instants a limiter sees follow the order its calls take effect in: true when it
  // decides on the store's clock (the store reads it as it runs each call), false on the
  // client's (each call brings the instant its client read, and the store may run a call that
  // read an earlier instant after one that read a later: the model then decides as its rule for
  // time going back says; a call without an answer read its clock at some instant from its
  // sending to the history's last). Either way a call answered before another was sent takes
  // effect first.
  bool instants_follow_order = true;
  // On the client's clock: whether each call's instant is the one its client read as it sent it,
  // its `invoke` (as `stress` sends each request the instant it sends it at), rather than any
  // instant of its interval.
  bool read_at_send = false;
  // The most search steps a key may take before its verdict is "unknown": a state entered (some
  // calls placed, each at an instant, and the model's state they leave), or an instant tried.
  int64_t max_states = 4'000'000;
  // And at least this many a call: a search near linear in the calls (each placed once, a few
  // instants tried for each of those that could go next) is not cut short on a key of many (a
  // 16-thread stress run's 150 000).
  int64_t max_states_per_call = 64;
  // Keys already shown broken (their promise broken wherever each decision fell, so no order
  // of their calls is the model's): each gets at most `broken_max_states` (whatever its calls),
  // enough to find the witness of a plain race, and a search that runs out there is no "unknown"
  // (it is counted in HistoryLinearizability::broken_keys_cut_short).
  std::set<std::string, std::less<>> already_broken;
  int64_t broken_max_states = 200'000;
  // How many instants that leave different states a call's interval is halved into before the
  // search tries instead only those that can matter to the calls after it (or, for a model
  // without such, gives up on exactness: "unknown").
  size_t most_instants = 64;
};

enum class LinearVerdict { kLinearizable, kNotLinearizable, kUnknown };
using LinearVerdictInfo = NameRow<LinearVerdict>;
inline constexpr LinearVerdictInfo kLinearVerdicts[] = {
    {LinearVerdict::kLinearizable, "linearizable"},
    {LinearVerdict::kNotLinearizable, "not linearizable"},
    {LinearVerdict::kUnknown, "unknown"},
};
std::string_view LinearVerdictName(LinearVerdict verdict);

// A call placed in a linearization: its index among the calls given, and the instant the limiter
// saw when it took effect.
struct LinearStep {
  size_t op = 0;
  Instant at{};
  bool operator==(const LinearStep&) const = default;
};

struct KeyLinearizability {
  LinearVerdict verdict = LinearVerdict::kUnknown;
  int64_t states = 0;  // search states explored
  // Linearizable: the order found. Otherwise the longest the search found (the most calls placed),
  // the history's longest linearizable prefix.
  std::vector<LinearStep> order;
  // Not linearizable: the answered call no order could place after `order` (of the calls left, the
  // first to be answered). Unknown: the same for the longest order found, a lead.
  std::optional<size_t> stuck;
  // Whether `stuck` itself cannot follow `order`: at no instant of its interval would the model,
  // in the state `order` leaves, give its answer (else it could, but no order of the calls left
  // after it can be completed).
  bool stuck_cannot_follow = false;
};

// The latest instant `op` can take effect at: on the store's clock its answer, and no later than
// `hi` (when the calls left are answered); on the client's its sending where it decides there
// (read_at_send), else its answer, or without one the history's `last` instant.
Instant LatestInstant(const LinearOp& op, const LinearizabilityOptions& options, Instant hi,
                      Instant last);

// The calls of one key. Requires !policy.Problem() and a positive resolution.
KeyLinearizability CheckLinearizable(const Policy& policy, std::span<const LinearOp> ops,
                                     const LinearizabilityOptions& options);

// A whole history, key by key: an event with a decision is an answered call, one without (no
// answer, or the limiter's own error) a call that may or may not have taken effect.
struct HistoryLinearizability {
  // Not linearizable when a key is not; else unknown when a key is; else linearizable.
  LinearVerdict verdict = LinearVerdict::kLinearizable;
  int64_t keys = 0;
  int64_t ops = 0;
  int64_t states = 0;
  int64_t unknown_keys = 0;
  int64_t broken_keys_cut_short = 0;  // already broken, whose search stopped at its budget
  // The first key (in key order) not linearizable, else the first unknown: its events (in the
  // order of `invoke`; `detail`'s indices are into it) and its search's result.
  std::string key;
  std::vector<const HistoryEvent*> events;
  KeyLinearizability detail;
};

HistoryLinearizability CheckHistoryLinearizable(const Policy& policy, const History& history,
                                                const LinearizabilityOptions& options);

}  // namespace ratelab

#endif  // RATELAB_JUDGE_LINEARIZABILITY_H_
