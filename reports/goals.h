// The goals a reader may pick a limiter for ("keep the least state", "admit the most"), and which
// limiter of one run is meaningfully the best at each. One table, read both by the advice of a
// run (advice.cc) and by a comparison over seeds (across_seeds.cc), which counts in how many
// seeds each limiter was the one picked, so a pick shown over seeds is one that held in every
// seed. Internal to reports/.
#ifndef RATELAB_REPORTS_GOALS_H_
#define RATELAB_REPORTS_GOALS_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reports/report_model.h"

namespace ratelab {

using Limiters = std::vector<const LimiterReport*>;

// How far ahead of the next a limiter must be to be picked for a goal, as a share of the next's
// value: closer than this, one seed's traffic against another's can turn the order round.
constexpr double kMeaningful = 0.05;

// A goal, as a cost to make least (a measure to make most is negated).
struct Goal {
  const char* goal;  // a verb phrase: "keep the claim exactly", "admit the most"
  double (*cost)(const LimiterReport&);
  // The goal tells the limiters apart only when their costs differ by more than this (below 0:
  // always, and the best is picked however close the next).
  double tolerance;
  std::string (*because)(const LimiterReport&);  // the number that makes it the pick
  bool among_kept;                               // only those that kept the claim qualify
};

std::span<const Goal> Goals();

// What one run says of one goal (over seeds, a goal among those that kept the claim counts only
// those that kept it in every seed): nothing (no limiter qualifies, or they do not differ), a best
// that ties with others (`tied`) or is too close to the next to pick (`next` set), or a pick.
struct GoalStanding {
  const LimiterReport* best = nullptr;  // null: the goal says nothing on this run
  std::optional<const LimiterReport*> next;
  Limiters tied;  // those with the best's very cost, beside it: no pick among them
  bool picked() const { return best != nullptr && !next && tied.empty(); }
};
GoalStanding Stand(const Goal& g, const RunReport& r);

// `name`'s numbers over the seeds of `r`'s comparison; null without one, or for a name it lacks.
const LimiterSpreadReport* SpreadOf(const RunReport& r, const std::string& name);

// Whether `l` kept the claim in `r`, and in every seed of its comparison over seeds if it is one.
bool KeptEverywhere(const LimiterReport& l, const RunReport& r);

// Whether a limiter answered every request it was sent (did not fail).
inline bool Answered(const LimiterReport& l) { return l.failed == 0; }

// The one of `ls` with the least `cost`; ties go to the one that keeps what it is held to
// (`claim`, or its own promise where none was given), then over-admits least, then denies least
// without need, then comes first.
const LimiterReport* Best(const Limiters& ls, const ClaimReport& claim,
                          const std::function<double(const LimiterReport&)>& cost);

// Helpers of the goals' numbers, shared with the advice.
double StatePerKey(const LimiterReport& l);
std::optional<double> P99(const LimiterReport& l);
// A number as short as it can be read: no decimals when whole.
std::string Short(double v);
// "8 bytes of state per key"; a log's "266 bytes of state per key, growing with the limit as a log
// does".
std::string Bytes(const LimiterReport& l);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_GOALS_H_
