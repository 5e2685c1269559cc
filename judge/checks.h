// The checks: everything a run can hold a limiter's history to, one table that every command
// reads (a scenario's `checks`, `ratelab check --checks`, `ratelab stress` and `ratelab list
// checks`). A check only judges: the running of the limiter (limiter_run.h) is done before, and
// hands the check what it needs (Judged).
#ifndef RATELAB_JUDGE_CHECKS_H_
#define RATELAB_JUDGE_CHECKS_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "judge/linearizability.h"
#include "judge/oracles.h"
#include "model/check_id.h"
#include "model/history.h"
#include "model/never_freed.h"
#include "model/policy.h"
#include "model/violation.h"

namespace ratelab {

// A fault of the run and the span it covers (an instant fault, a clock jump, has from == to).
struct FaultWindow {
  std::string what;  // "the store was unreachable at 12:00:10.000 for 20s"
  Instant from{};
  Instant to{};
  bool operator==(const FaultWindow&) const = default;
};

// What a check judges: one limiter's run of a scenario.
struct Judged {
  const History& history;   // at the protocol's time resolution
  const Policy& policy;     // the limiter's own
  int64_t claim_limit = 0;  // the scenario's claim: `claim_limit` in any `claim_window`
  Duration claim_window{};
  const AnyWindowReport& any_window;  // the claim's any-window report, computed once a run
  // What the run left in its stores that nothing will ever free.
  const std::vector<NeverFreed>& never_expire;
  // The node crashes and store restarts of the run.
  const std::vector<FaultWindow>& restarts;
  // The same limiter's history (at its resolution) when the run is simulated again without its
  // crashes and restarts.
  const std::function<Result<History>()>& without_restarts;
  // The unit the limiter's Retry-After comes in: whole seconds over HTTP.
  Duration retry_after_unit = Duration(1);
  // The unit an admission's wait comes in (a script's wait_s: whole seconds, perhaps rounded up):
  // a wait longer than the model's by less than it, or than the resolution, is the model's.
  Duration wait_unit = Duration(1);
  // The resolution the limiter decides at (its clock's: a millisecond for a script on {now_ms}):
  // a wait it answers closer to the exact one than this is the exact one.
  Duration resolution = Duration(1);
  // The tick a window's edge may tie with a request at (TiePolicy): the resolution, or none where
  // the edges are whole ticks of the clock that decides (ProtocolInfo::tie).
  Duration tie = Duration(1);
  // The history before its instants were floored to `resolution`, made when a check asks for it
  // (empty when none was floored): a tie at the resolution between requests exactly a window
  // apart there is exact, and judged as such.
  std::function<History()> exact = nullptr;
};

// A check a scenario can hold a run to: its id (whose name and summary are model/check_id.h's)
// and how it judges.
struct CheckInfo {
  CheckId id;
  // Judges a simulated run: its violations, or why it could not judge (a run that failed).
  using Judge = Result<std::vector<Violation>> (*)(const Judged& run);
  Judge judge;
  // Judges a history of real concurrency (ratelab stress), where a decision took effect
  // somewhere in [invoke, complete] and the store's order is unknown, reporting only what is
  // broken wherever each fell; nullptr when the check needs the order, and nullopt when it
  // cannot judge this policy so (see CheckPromiseOverIntervals for `horizon` and `fresh`).
  std::optional<std::vector<Violation>> (*judge_over_intervals)(const History& h,
                                                                const Policy& policy,
                                                                Duration horizon, bool fresh);
  // Judges by the limiter's own policy (Judged::policy), not only the scenario's claim: no use
  // for a limiter by rules, whose policy is each rule's.
  bool by_policy;
};

// Every check, in the order `ratelab list checks` shows them. (The boundary-burst ratio is not
// one: every run reports it.)
std::span<const CheckInfo> Checks();
// Whether `id` is one of Checks(): a check a scenario can ask for.
bool IsScenarioCheck(CheckId id);
// The row of `id`, one of Checks().
const CheckInfo& CheckOf(CheckId id);
// The check named `name`, or InvalidArgument naming the checks there are.
Result<CheckId> ParseCheck(std::string_view name);
// A comma-separated list of checks (`ratelab list checks`), at least one.
Result<std::vector<CheckId>> ParseCheckList(std::string_view text);
// The checks as ParseCheckList reads them.
std::string FormatCheckList(const std::vector<CheckId>& checks);

// The result of one check of one limiter.
struct CheckResult {
  CheckId check;
  std::vector<Violation> violations;
  std::string_view name() const { return CheckName(check); }
};

// The one tie rule of every command: at a clock `resolution` coarser than a nanosecond, a window
// or log edge on the tick of a request may have fallen either side of it (the instants judged were
// floored; not so where the edges are themselves whole ticks of the clock that decides, whose
// `resolution` here is a nanosecond: ProtocolInfo::tie), so a verdict against a windowed model
// holds only if it holds with the window a tick shorter (a closed window's edge, as half open:
// anchored-window, sliding-log-closed) or longer (a half-open log's, as closed: sliding-log) too.
// That policy, or none where no edge can tie (a fixed window's edges are whole ticks either way; a
// bucket's tie is its own: FalseDenials).
std::optional<Policy> TiePolicy(const Policy& policy, Duration resolution);

// Judges a history of real concurrency (`ratelab stress`, `ratelab probe`) by `policy`'s promise
// over intervals: `judged` is `history` at the resolution the limiter sees time (the same
// events, ids their positions), and each witness shows the events as they were in `history`. A
// closed window is judged a tick of `tie_at` shorter (TiePolicy; ProtocolInfo::tie). `fresh`:
// no key of it saw traffic before it (CheckPromiseOverIntervals).
std::vector<Violation> JudgePromiseOverIntervals(const History& history, const History& judged,
                                                 const Policy& policy, Duration tie_at, bool fresh);

// The denials of a history of real concurrency that no order explains on their own, whatever
// the search of linearizability could decide: the model had room for the request wherever in its
// interval it was decided (on the client's `clock`, at the instant it was sent), with every other
// request of its key that may have come first taken as admitted, each as late as its interval
// lets it (what leaves a window, a log or a bucket the least room), and so at the tie of the
// `resolution` too (TiePolicy). The first such denial of each key; none for a model an earlier
// admission can give more room (an anchored window). `judged` is `history` at the resolution;
// `tie`, the tick a window's edge may tie at (ProtocolInfo::tie).
std::vector<Violation> JudgeFalseDenialsOverIntervals(const History& history, const History& judged,
                                                      const Policy& policy, Duration resolution,
                                                      Duration tie, DecisionClock clock);
// Whether JudgeFalseDenialsOverIntervals judges `policy`'s algorithm at all.
bool FalseDenialsJudgedOverIntervals(const Policy& policy);

// Whether a history of real concurrency is linearizable by `policy`'s model (model/
// linearizability.h), key by key, at the limiter's clock `resolution`, comparing whether each call
// was allowed, on the clock it decides on: a denial or an admission that no order of the calls,
// each taking effect inside its [sent, answered] interval, explains. Judges false denials under
// real concurrency, where the store's order is unknown, as well as over-admission.
struct LinearizabilityJudgement {
  LinearVerdict verdict = LinearVerdict::kLinearizable;
  int64_t keys = 0;
  int64_t calls = 0;
  int64_t states = 0;        // searched
  int64_t unknown_keys = 0;  // whose search ran out of states: no verdict
  // Keys already broken whose (shorter) search ran out: no order can explain them anyway, so the
  // verdict is "not linearizable", said in `lead`, with no violation of its own.
  int64_t broken_keys = 0;
  // Unknown: where the first such key's search got to, a lead and not a verdict (or why keys
  // already broken are not linearizable).
  std::string lead;
  // Not linearizable: the first key that is not. Its witness is the end of the longest
  // linearizable prefix found (in the order it placed them) and the call no order could place
  // after it, last.
  std::optional<Violation> violation;
};
// `already_broken`: the keys whose promise is broken (their violations' keys), each searched
// only briefly (LinearizabilityOptions::already_broken, with `broken_max_states` unless unset).
// On the client's `clock` each call's instant is the one it was sent at (its `invoke`), as
// `stress` sends it. `tie`: the tick a window's edge may tie at (ProtocolInfo::tie).
LinearizabilityJudgement JudgeLinearizability(const History& history, const Policy& policy,
                                              Duration resolution, Duration tie,
                                              DecisionClock clock,
                                              const std::vector<Violation>& already_broken = {},
                                              std::optional<int64_t> broken_max_states = {});

}  // namespace ratelab

#endif  // RATELAB_JUDGE_CHECKS_H_
