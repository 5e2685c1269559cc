#include "reports/goals.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "reports/view_parts.h"

namespace ratelab {

using view_parts::Fixed;

double StatePerKey(const LimiterReport& l) { return l.metrics.state_bytes_per_key.value_or(0); }

std::optional<double> P99(const LimiterReport& l) {
  if (!l.metrics.latency_ms) return std::nullopt;
  return l.metrics.latency_ms->p99;
}

std::string Short(double v) { return Fixed(v, std::abs(v - std::round(v)) < 0.05 ? 0 : 1); }

std::string Bytes(const LimiterReport& l) {
  return Short(StatePerKey(l)) + " bytes of state per key" +
         (l.algorithm && Describe(*l.algorithm).log ? ", growing with the limit as a log does"
                                                    : "");
}

const LimiterReport* Best(const Limiters& ls, const ClaimReport& claim,
                          const std::function<double(const LimiterReport&)>& cost) {
  const auto rank = [&](const LimiterReport& l) {
    return std::tuple(cost(l), l.ClaimBroken(claim) > 0, l.metrics.over_admitted,
                      l.metrics.false_denials);
  };
  const LimiterReport* best = nullptr;
  for (const LimiterReport* l : ls) {
    if (best == nullptr || rank(*l) < rank(*best)) best = l;
  }
  return best;
}

namespace {

constexpr Goal kGoals[] = {
    {"keep the claim exactly", StatePerKey, -1, Bytes, true},
    {"keep the least state", StatePerKey, 0.05, Bytes, false},
    {"admit the most", [](const LimiterReport& l) { return -static_cast<double>(l.admitted); }, 0,
     [](const LimiterReport& l) {
       return std::to_string(l.admitted) + " of " + std::to_string(l.offered) + " admitted";
     },
     false},
    {"give busy users the fairest share",
     [](const LimiterReport& l) { return -l.metrics.fairness.value_or(0); }, 0.02,
     [](const LimiterReport& l) { return "fairness " + Fixed(l.metrics.fairness.value_or(0), 3); },
     false},
    {"take the fewest store steps",
     [](const LimiterReport& l) { return l.metrics.steps_per_decision; }, 0.005,
     [](const LimiterReport& l) {
       return Fixed(l.metrics.steps_per_decision, 2) + " per decision";
     },
     false},
    {"answer fastest", [](const LimiterReport& l) { return P99(l).value_or(0); }, 0.0005,
     [](const LimiterReport& l) { return "p99 " + Fixed(P99(l).value_or(0), 3) + " ms"; }, false},
    {"answer through faults",
     [](const LimiterReport& l) { return static_cast<double>(l.unanswered); }, 0,
     [](const LimiterReport& l) { return std::to_string(l.unanswered) + " unanswered"; }, false},
};

// Whether the costs of `ls` differ by more than `tolerance`.
bool Differ(const Limiters& ls, double (*cost)(const LimiterReport&), double tolerance) {
  if (ls.empty()) return false;
  const auto [lo, hi] = std::minmax_element(
      ls.begin(), ls.end(),
      [&](const LimiterReport* a, const LimiterReport* b) { return cost(*a) < cost(*b); });
  return cost(**hi) - cost(**lo) > tolerance;
}

// The lowest cost above `best`'s among `ls`: the runner-up's; none when every one ties.
std::optional<const LimiterReport*> RunnerUp(const Limiters& ls, const LimiterReport& best,
                                             double (*cost)(const LimiterReport&)) {
  std::optional<const LimiterReport*> next;
  for (const LimiterReport* l : ls) {
    if (cost(*l) > cost(best) && (!next || cost(*l) < cost(**next))) next = l;
  }
  return next;
}

}  // namespace

std::span<const Goal> Goals() { return kGoals; }

const LimiterSpreadReport* SpreadOf(const RunReport& r, const std::string& name) {
  if (!r.across_seeds) return nullptr;
  for (const LimiterSpreadReport& s : r.across_seeds->limiters) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool KeptEverywhere(const LimiterReport& l, const RunReport& r) {
  if (l.ClaimBroken(r.claim) > 0) return false;
  if (!r.across_seeds) return true;
  const LimiterSpreadReport* s = SpreadOf(r, l.name);
  return s != nullptr && s->seeds_over_claim == 0 && s->seeds_failed == 0;
}

GoalStanding Stand(const Goal& g, const RunReport& r) {
  Limiters among;
  for (const LimiterReport& l : r.limiters) {
    if (Answered(l) && (!g.among_kept || KeptEverywhere(l, r))) among.push_back(&l);
  }
  GoalStanding s;
  if (among.empty() || (g.tolerance >= 0 && !Differ(among, g.cost, g.tolerance))) return s;
  s.best = Best(among, r.claim, g.cost);
  for (const LimiterReport* l : among) {
    if (l != s.best && g.cost(*l) == g.cost(*s.best)) s.tied.push_back(l);
  }
  // A difference of a few percent is what another seed of the same traffic moves: no pick.
  if (const std::optional<const LimiterReport*> next = RunnerUp(among, *s.best, g.cost);
      g.tolerance >= 0 && next &&
      g.cost(**next) - g.cost(*s.best) < kMeaningful * std::abs(g.cost(**next))) {
    s.next = next;
  }
  return s;
}

}  // namespace ratelab
