#include "reports/advice.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string_view>

#include "judge/oracles.h"
#include "reports/across_seeds.h"
#include "reports/goals.h"
#include "reports/view_parts.h"

namespace ratelab {

namespace {

using view_parts::Claim;
using view_parts::Fixed;
using view_parts::HeldTo;
using view_parts::Yardstick;

// What a keeper kept, as a noun: "the claim", or "its own promise" where the scenario gave none.
std::string Kept(const RunReport& r) { return r.claim.not_given ? "its own promise" : "the claim"; }

// How many keys broke `check`, if the run had it.
std::optional<uint64_t> Broken(const LimiterReport& l, CheckId check) {
  for (const CheckCount& c : l.checks) {
    if (c.check == check) return c.violations;
  }
  return std::nullopt;
}

uint64_t PromiseBroken(const LimiterReport& l) { return Broken(l, CheckId::kPromise).value_or(0); }

// "a", "a and b", "a, b and c".
std::string Names(const Limiters& ls) {
  std::vector<std::string> names;
  for (const LimiterReport* l : ls) names.push_back(l->name);
  return view_parts::Listed(names);
}

std::string Count(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Percent(int64_t part, int64_t whole) {
  return whole == 0 ? "0%" : Fixed(100.0 * static_cast<double>(part) / whole, 1) + "%";
}

// Whether any decision of the run took time on its clock.
bool LatencyIsReal(const Limiters& ls) {
  return std::any_of(ls.begin(), ls.end(), [](const LimiterReport* l) { return P99(*l) > 0; });
}

// "over-admits 43: up to 9 in one 1m window, 1.80x the limit".
std::string OverAdmission(const RunReport& r, const LimiterReport& l) {
  return "over-admits " + std::to_string(l.metrics.over_admitted) + ": up to " +
         std::to_string(l.max_in_any_window) + " in one " + r.claim.window + " window, " +
         Fixed(l.metrics.burst_ratio, 2) + "x the limit";
}

// What `l` admitted short of the exact limiter of the claim on the same traffic: "36 fewer
// (6843 against 6879)", "none fewer (7229 against 6879)"; empty in a report written before it was
// measured.
std::string Lost(const LimiterReport& l) {
  if (!l.metrics.exact_admitted) return "";
  const int64_t lost = *l.metrics.exact_admitted - l.admitted;
  return (lost > 0 ? std::to_string(lost) : std::string("none")) + " fewer (" +
         std::to_string(l.admitted) + " against " + std::to_string(*l.metrics.exact_admitted) + ")";
}

// The same over every seed of a comparison over seeds, for the sentences that speak for all of
// them (the picks, the one to quote): the median over the seeds, and the worst with its seed and
// its window; OverAdmission on one run.
std::string OverAdmissionEverySeed(const RunReport& r, const LimiterReport& l) {
  const LimiterSpreadReport* s = SpreadOf(r, l.name);
  if (s == nullptr) return OverAdmission(r, l);
  const double most = s->max_in_any_window.worst;
  return "over-admits a median of " + Short(s->over_admitted.median) + " over the " +
         std::to_string(r.across_seeds->count) + " seeds (worst " + Short(s->over_admitted.worst) +
         ", in seed " + std::to_string(s->over_admitted.worst_seed) + "): up to " + Short(most) +
         " in one " + r.claim.window + " window, " +
         Fixed(r.claim.limit > 0 ? most / static_cast<double>(r.claim.limit) : 0, 2) +
         "x the limit";
}

// Bytes(l), over every seed of a comparison over seeds for the sentence that speaks for all of
// them: "a median of 163.5 bytes of state per key over the 20 seeds (worst 170)".
std::string BytesEverySeed(const RunReport& r, const LimiterReport& l) {
  const LimiterSpreadReport* s = SpreadOf(r, l.name);
  if (s == nullptr || !s->state_bytes_per_key) return Bytes(l);
  const SpreadReport& bytes = *s->state_bytes_per_key;
  const bool log = l.algorithm && Describe(*l.algorithm).log;
  return "a median of " + Short(bytes.median) + " bytes of state per key over the " +
         std::to_string(r.across_seeds->count) + " seeds" +
         (bytes.worst != bytes.median ? " (worst " + Short(bytes.worst) + ")" : "") +
         (log ? ", growing with the limit as a log does" : "");
}

// What a pick keeps or gives up: over seeds, in every seed.
std::string Trade(const RunReport& r, const LimiterReport& l) {
  if (const LimiterSpreadReport* spread = SpreadOf(r, l.name)) {
    std::string s =
        KeptEverywhere(l, r) ? "keeps " + Kept(r) + " in every seed" : OverAdmissionEverySeed(r, l);
    if (spread->false_denials.worst > 0) {
      s += "; denies a median of " + Short(spread->false_denials.median) + " " + Yardstick(r) +
           " had room for (worst " + Short(spread->false_denials.worst) + ")";
    }
    return s;
  }
  std::string s = l.ClaimBroken(r.claim) == 0 ? "keeps " + Kept(r) : OverAdmission(r, l);
  if (l.metrics.false_denials > 0) {
    const std::string lost = Lost(l);
    s += lost.empty() ? "; denies " + std::to_string(l.metrics.false_denials) + " " + Yardstick(r) +
                            " had room for"
                      : "; admits " + lost + " than an exact limiter";
  }
  return s;
}

// The first sentence: who kept the claim.
std::string Verdict(const RunReport& r, const Limiters& answered, const Limiters& kept) {
  const std::string claim = HeldTo(r);
  if (r.limiters.size() == 1) {
    const LimiterReport& l = r.limiters[0];
    if (!Answered(l)) {
      return l.name + " failed on " + Count(l.failed, "request", "requests") +
             " (it answered with its own error), so nothing can be concluded about " + claim +
             " until that is fixed.";
    }
    if (l.ClaimBroken(r.claim) == 0) {
      return l.name + " kept " + claim + " on every key" +
             (r.claim.not_given ? "."
                                : ": at most " + std::to_string(l.max_in_any_window) +
                                      " admitted in any " + r.claim.window + ".");
    }
    return l.name + " broke " + claim + " for " + Count(l.ClaimBroken(r.claim), "key", "keys") +
           ". It " + OverAdmission(r, l) + ".";
  }
  const std::string of = std::to_string(r.limiters.size()) + " limiters";
  if (kept.empty()) {
    if (answered.empty()) return "All " + of + " failed, so nothing can be concluded.";
    const LimiterReport* closest = Best(answered, r.claim, [](const LimiterReport& l) {
      return static_cast<double>(l.metrics.over_admitted);
    });
    return "None of the " + of + " kept " + claim + " on every key. The closest, " + closest->name +
           ", " + OverAdmission(r, *closest) + ".";
  }
  if (kept.size() == r.limiters.size()) {
    return "All " + of + " kept " + (r.claim.not_given ? "their own promises" : claim) +
           " on every key.";
  }
  return "Of the " + of + ", " + (kept.size() == 1 ? "only " : "") + Names(kept) + " kept " +
         claim + " on every key.";
}

// What keeping the claim costs: the state and steps of those that kept it, beside the leanest.
std::string KeepersCost(const RunReport& r, const Limiters& answered, const Limiters& kept,
                        bool latency) {
  const LimiterReport* keeper = Best(kept, r.claim, StatePerKey);
  std::string s = (kept.size() == 1 ? "It" : "The leanest of them, " + keeper->name + ",") +
                  " keeps " + Short(StatePerKey(*keeper)) + " bytes of state per key and takes " +
                  Fixed(keeper->metrics.steps_per_decision, 2) + " store steps per decision";
  if (latency && P99(*keeper)) s += " (p99 latency " + Fixed(*P99(*keeper), 3) + " ms)";
  const LimiterReport* leanest = Best(answered, r.claim, StatePerKey);
  if (StatePerKey(*leanest) > 0 && StatePerKey(*keeper) > 1.05 * StatePerKey(*leanest)) {
    s += ": " + Fixed(StatePerKey(*keeper) / StatePerKey(*leanest), 1) + " times the " +
         Short(StatePerKey(*leanest)) + " bytes of " + leanest->name + ", which does not";
  }
  return s + ".";
}

// Who admitted past the claim, and how far, most first; limiters with the same numbers together.
std::string OverAdmitters(const RunReport& r, Limiters over) {
  std::stable_sort(over.begin(), over.end(), [](const LimiterReport* a, const LimiterReport* b) {
    return a->metrics.over_admitted > b->metrics.over_admitted;
  });
  std::vector<std::string> parts;
  for (size_t i = 0; i < over.size();) {
    Limiters same = {over[i]};
    const auto numbers = [](const LimiterReport* l) {
      return std::pair(l->metrics.over_admitted, l->max_in_any_window);
    };
    while (i + same.size() < over.size() && numbers(over[i + same.size()]) == numbers(over[i])) {
      same.push_back(over[i + same.size()]);
    }
    parts.push_back(Names(same) + " admitted " + std::to_string(over[i]->metrics.over_admitted) +
                    (same.size() > 1 ? " each" : "") + " (up to " +
                    std::to_string(over[i]->max_in_any_window) + " in one " + r.claim.window +
                    " window)");
    i += same.size();
  }
  std::string s = "Past " + Yardstick(r) + ", ";
  for (size_t i = 0; i < parts.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == parts.size() ? "; and " : "; ") + parts[i];
  }
  return s + ".";
}

// Who denied what the claim had room for: first what users lose (admissions short of the exact
// limiter of the claim on the same traffic), then the request-by-request count apart.
std::string Denials(const RunReport& r, const Limiters& answered) {
  Limiters denying;
  for (const LimiterReport* l : answered) {
    if (l->metrics.false_denials > 0) denying.push_back(l);
  }
  if (denying.empty()) {
    return answered.size() == 1 ? "It denied no request " + Yardstick(r) + " had room for."
                                : "None denied a request " + Yardstick(r) + " had room for.";
  }
  std::string s;
  for (size_t i = 0; i < denying.size(); ++i) {
    const LimiterReport& l = *denying[i];
    const std::string lost = Lost(l);
    s += (i == 0 ? "" : " ") + l.name;
    if (!lost.empty()) {
      s += " admitted " + lost + " than an exact limiter of " + Yardstick(r) +
           " would have on the same traffic; request by request, it";
    }
    s += " denied " + Count(l.metrics.false_denials, "request", "requests") + " at a moment " +
         Yardstick(r) +
         " had room for them (its false denials: " + Percent(l.metrics.false_denials, l.offered) +
         " of the " + std::to_string(l.offered) + " it was offered" +
         (lost.empty() ? "; an exact limiter would have admitted them" : "") + ").";
  }
  if (answered.size() > denying.size()) s += " The others denied none.";
  return s;
}

// Whether every seed of a comparison over seeds gave the same traffic: its seeds are then runs of
// one traffic, evidence of nothing beyond it.
bool OneTraffic(const RunReport& r) {
  return r.across_seeds && r.across_seeds->traffics == 1 && r.across_seeds->count > 1;
}
// ", all of one traffic" where that is so: beside every "in every one of the N seeds".
std::string OfOneTraffic(const RunReport& r) { return OneTraffic(r) ? ", all of one traffic" : ""; }

// Whether `l` only approximates the claim of N in any W: a window of the claim's own N per W that
// keeps it on some traffic and breaks it on traffic shaped against it (the fixed window's 2N
// across an edge, the sliding counter's and the anchored windows' 2N - 1), where N is at least 2;
// a log keeps it on any. Judged only where its policy is the claim's (a looser claim may be one
// it promises).
bool ApproximatesTheClaim(const RunReport& r, const LimiterReport& l) {
  if (r.claim.not_given || !l.algorithm || Describe(*l.algorithm).bucket || r.claim.limit < 2) {
    return false;
  }
  if (*l.algorithm == Algorithm::kSlidingLog || *l.algorithm == Algorithm::kSlidingLogClosed) {
    return false;
  }
  return l.policy == std::string(AlgorithmName(*l.algorithm)) + " " +
                         std::to_string(r.claim.limit) + " per " + r.claim.window;
}

// A pick's limiter when no limiter is meaningfully ahead.
constexpr char kNoDifference[] = "no meaningful difference";

// In how many seeds of a comparison over seeds `name` was picked for `goal`; none without a
// comparison over seeds, or in a report written before picks were counted.
std::optional<uint64_t> SeedsPicked(const RunReport& r, const std::string& name,
                                    const std::string& goal) {
  const LimiterSpreadReport* l = SpreadOf(r, name);
  if (l == nullptr || !l->picked) return std::nullopt;
  for (const GoalSeeds& g : *l->picked) {
    if (g.goal == goal) return g.seeds;
  }
  return 0;
}

// The goal of keeping what each limiter is held to, in words: "keep the claim exactly", or
// "keep its own promise" where the scenario gave no claim.
std::string KeepGoal(const RunReport& r) {
  return r.claim.not_given ? "keep its own promise" : "keep the claim exactly";
}

std::vector<Pick> Picks(const RunReport& r) {
  std::vector<Pick> picks;
  for (const Goal& g : Goals()) {
    const GoalStanding s = Stand(g, r);
    // The goal as the report says it: where no claim was given, keeping one is keeping each
    // limiter's own promise.
    const std::string goal = g.among_kept ? KeepGoal(r) : g.goal;
    if (s.best == nullptr) continue;
    const LimiterReport& best = *s.best;
    if (!s.tied.empty()) {
      // Limiters with the very same number: none is ahead, whatever the seeds say.
      Limiters all = {&best};
      all.insert(all.end(), s.tied.begin(), s.tied.end());
      picks.push_back({goal, kNoDifference, Names(all) + " tie, each with " + g.because(best), ""});
      continue;
    }
    if (s.next) {
      picks.push_back({goal, kNoDifference,
                       best.name + " " + g.because(best) + " against " + (*s.next)->name + " " +
                           g.because(**s.next) + ": within " + Short(100 * kMeaningful) + "%",
                       ""});
      continue;
    }
    // A goal that always picks (the keeper with the least state) needs no lead in every seed.
    const std::optional<uint64_t> held =
        g.tolerance < 0 ? std::nullopt : SeedsPicked(r, best.name, g.goal);
    const std::string seeds = held ? std::to_string(r.across_seeds->count) : "";
    if (held && *held < r.across_seeds->count) {
      picks.push_back({goal, kNoDifference,
                       best.name + " " + g.because(best) + " in seed " + std::to_string(r.seed) +
                           ", but it was ahead in only " + std::to_string(*held) + " of the " +
                           seeds + " seeds",
                       ""});
      continue;
    }
    std::string because = g.because(best);
    if (held) because += "; ahead in every one of the " + seeds + " seeds" + OfOneTraffic(r);
    picks.push_back({goal, best.name, std::move(because), Trade(r, best)});
  }
  return picks;
}

// How the picks were decided: over every seed of a comparison, or on this one run.
std::string HowPicked(const RunReport& r) {
  const std::string ahead = "A limiter is picked for a goal only when it is at least " +
                            Short(100 * kMeaningful) + "% ahead of the next";
  if (r.across_seeds && !r.across_seeds->limiters.empty() &&
      r.across_seeds->limiters.front().picked) {
    return ahead + " in every one of the " + std::to_string(r.across_seeds->count) +
           " seeds, otherwise there is no meaningful difference; to " + KeepGoal(r) +
           ", the one with the least state of those that kept it in every seed.";
  }
  return ahead +
         " in this run, which is one seed's traffic (--seeds tells whether each pick "
         "holds on other traffic); " +
         "to " + KeepGoal(r) + ", the one with the least state of those that kept it.";
}

// The recommendation in one sentence a reviewer can quote: "Pick X because Y, unless Z."
std::string Quote(const RunReport& r, const Limiters& answered, const Limiters& kept) {
  const auto least_state = [&](const Limiters& ls) { return Best(ls, r.claim, StatePerKey); };
  if (!kept.empty()) {
    const LimiterReport& x = *least_state(kept);
    // Those that keep it with the very same state tie: the sentence names each.
    std::vector<std::string> tied;
    for (const LimiterReport* l : kept) {
      if (StatePerKey(*l) == StatePerKey(x)) tied.push_back(l->name);
    }
    std::string s = "Pick " + view_parts::Listed(tied, " or ") + " because " +
                    (tied.size() == 1 ? "it keeps " : "each keeps ") + HeldTo(r) +
                    (r.across_seeds ? " (in all " + std::to_string(r.across_seeds->count) +
                                          " seeds" + OfOneTraffic(r) + ")"
                                    : "") +
                    (StatePerKey(x) > 0 ? " with " + BytesEverySeed(r, x) : "");
    // A window that only approximates the claim kept it on this traffic, not on every traffic.
    if (tied.size() == 1 && ApproximatesTheClaim(r, x)) {
      s += ", though only on this traffic: " + std::string(AlgorithmName(*x.algorithm)) +
           " does not promise the claim, and traffic shaped against it goes past it (ratelab "
           "worst " +
           x.protocol + " measures how far)";
    }
    const LimiterReport& lean = *least_state(answered);
    // Where no claim was given, the leaner one broke its own promise: a defect, not a trade-off.
    if (!r.claim.not_given && &lean != &x && !KeptEverywhere(lean, r) &&
        StatePerKey(lean) < StatePerKey(x)) {
      s += ", unless admitting past the claim is acceptable: " + lean.name + " keeps " +
           BytesEverySeed(r, lean) + " and " + OverAdmissionEverySeed(r, lean);
    }
    return s + ".";
  }
  // Closest: over seeds, by the seeds it admitted past the claim in, then its median excess; on
  // one run, by its excess.
  const auto distance = [&](const LimiterReport& l) {
    const LimiterSpreadReport* s = SpreadOf(r, l.name);
    return s != nullptr
               ? std::pair<double, double>(static_cast<double>(s->seeds_over_claim),
                                           s->over_admitted.median)
               : std::pair<double, double>(0, static_cast<double>(l.metrics.over_admitted));
  };
  const LimiterReport* closest = nullptr;
  for (const LimiterReport* l : answered) {
    if (closest == nullptr || distance(*l) < distance(*closest)) closest = l;
  }
  const LimiterSpreadReport* over_seeds = SpreadOf(r, closest->name);
  const std::string how = over_seeds != nullptr
                              ? "it admitted past it in " +
                                    std::to_string(over_seeds->seeds_over_claim) + " of the " +
                                    std::to_string(r.across_seeds->count) + " seeds, a median of " +
                                    Short(over_seeds->over_admitted.median) + " too many"
                              : "it " + OverAdmission(r, *closest);
  if (r.claim.not_given) {
    return "Pick none as they are: every limiter broke its own promise; the closest to " +
           Claim(r) + " is " + closest->name + " (" + how + ").";
  }
  return "Pick " + closest->name + " because it comes closest to the claim " + Claim(r) + " (" +
         how + "), unless the claim must hold exactly: none of these keeps it" +
         (over_seeds != nullptr ? " in every seed" : "") + ", and a sliding log would.";
}

// For a comparison over seeds, the first sentences: who kept the claim in every seed, who admitted
// past it in how many (with the median and worst), who failed; and which seed the rest shows.
std::vector<std::string> AcrossSeeds(const RunReport& r) {
  const SeedsSpreadReport& s = *r.across_seeds;
  const auto of = [&](uint64_t seeds) {
    return std::to_string(seeds) + " of " + std::to_string(s.count) + " seeds";
  };
  std::vector<std::string> kept, over, failed;
  for (const LimiterSpreadReport& l : s.limiters) {
    if (l.seeds_failed > 0) {
      failed.push_back(l.name + " in " + of(l.seeds_failed) + " (first: seed " +
                       std::to_string(l.first_failed_seed) + ")");
    } else if (l.seeds_over_claim == 0) {
      kept.push_back(l.name);
    }
    if (l.seeds_over_claim > 0) {
      over.push_back(l.name + " in " + of(l.seeds_over_claim) + " (over-admitted: median " +
                     Short(l.over_admitted.median) + ", worst " + Short(l.over_admitted.worst) +
                     " in seed " + std::to_string(l.over_admitted.worst_seed) + ")");
    }
  }
  std::string first = "Over the " + std::to_string(s.count) + " seeds " + std::to_string(s.first) +
                      ".." + std::to_string(s.first + s.count - 1) + ", ";
  if (!kept.empty()) {
    first += view_parts::Listed(kept) + (kept.size() == 1 ? " kept " : " each kept ") +
             (r.claim.not_given ? "its own promise" : "the claim " + Claim(r)) + " in every seed";
  }
  if (!over.empty()) {
    // Past what each was held to: the claim, or (none given) its own promise.
    const std::string all = r.claim.not_given
                                ? "every limiter broke its own promise: "
                                : "every limiter admitted past the claim " + Claim(r) + ": ";
    const std::string some =
        r.claim.not_given ? "; broke its own promise: " : "; admitted past it: ";
    first += (kept.empty() ? all : some) + view_parts::Listed(over);
  }
  if (kept.empty() && over.empty()) first += "no limiter answered without failing";
  std::vector<std::string> out = {first + "."};
  if (OneTraffic(r)) {
    out.push_back("Every one of the " + std::to_string(s.count) +
                  " seeds gave the same traffic (the scenario draws none of it at random: only "
                  "latencies, routing and faults differ from seed to seed), so what held in "
                  "every seed held on this one traffic, not on " +
                  std::to_string(s.count) + " different ones.");
  }
  if (!failed.empty()) {
    out.push_back("Failed (answered with their own error): " + view_parts::Listed(failed) + ".");
  }
  out.push_back("The rest of this report shows seed " + std::to_string(r.seed) + "'s run, " +
                (FoundSomething(r) ? "the first of the range in which a check was broken or a "
                                     "limiter failed."
                                   : "the first of the range."));
  return out;
}

}  // namespace

Advice Advise(const RunReport& r) {
  Advice a;
  if (r.limiters.empty()) {
    a.summary.push_back("No limiter ran.");
    return a;
  }
  Limiters answered, kept, over;
  for (const LimiterReport& l : r.limiters) {
    if (!Answered(l)) continue;
    answered.push_back(&l);
    (l.ClaimBroken(r.claim) == 0 ? kept : over).push_back(&l);
  }
  if (r.across_seeds && r.across_seeds->count > 0) a.across_seeds = AcrossSeeds(r);
  a.summary.push_back(Verdict(r, answered, kept));
  const bool several = r.limiters.size() > 1;
  if (several && !kept.empty())
    a.summary.push_back(KeepersCost(r, answered, kept, LatencyIsReal(answered)));
  if (several && !kept.empty() && !over.empty()) a.summary.push_back(OverAdmitters(r, over));
  if (!answered.empty()) a.summary.push_back(Denials(r, answered));
  for (const LimiterReport& l : r.limiters) {
    if (const uint64_t broken = PromiseBroken(l); broken > 0) {
      a.summary.push_back(
          l.name + " broke its own promise (" + l.policy + ") for " + Count(broken, "key", "keys") +
          (r.faults.empty() ? ": it does not do what its algorithm says, a defect rather than a "
                              "trade-off."
                            : ", in a run with faults: see what it decided while they lasted "
                              "before calling it a defect."));
    }
    if (several && !Answered(l)) {
      a.summary.push_back(l.name + " failed on " + Count(l.failed, "request", "requests") +
                          " (it answered with its own error), so it is left out of this advice.");
    }
    if (Answered(l) && l.unanswered > 0) {
      a.summary.push_back(l.name + " left " + std::to_string(l.unanswered) + " of its " +
                          std::to_string(l.offered) + " requests unanswered (" +
                          Percent(l.unanswered, l.offered) + ").");
    }
  }
  if (answered.size() >= 2) {
    a.picks = Picks(r);
    a.how_picked = HowPicked(r);
    Limiters kept_everywhere;
    for (const LimiterReport* l : kept) {
      if (KeptEverywhere(*l, r)) kept_everywhere.push_back(l);
    }
    a.quote = Quote(r, answered, kept_everywhere);
  }
  return a;
}

std::vector<std::string> ExplainVerdicts(const RunReport& r) {
  const std::string limit = std::to_string(r.claim.limit), window = r.claim.window;
  std::vector<std::string> out = {
      "Own promise: what the limiter's algorithm guarantees (per aligned window for the fixed "
      "window, in any window for the log, a burst and then a steady rate for the buckets). " +
          (r.claim.not_given ? "Claim: the scenario gives none, so each limiter is held to its "
                               "own promise alone, and the measures are against " +
                                   Claim(r) + ", the first limiter's."
                             : "Claim: every limiter held to " + Claim(r) + "."),
      "Max in any " + window + " / limit: the most one key had admitted in any " + window +
          " window, and that over " + limit + ". Over-admitted: admissions that made the " +
          window + " window ending at them hold more than " + limit +
          " for their key. False denials: denials " + Yardstick(r) +
          " had room for (that window held fewer than " + limit +
          " of the limiter's admissions), which an exact limiter would have admitted."};
  Limiters buckets, windows;
  for (const LimiterReport& l : r.limiters) {
    const bool past = r.claim.not_given ? l.metrics.over_admitted > 0 : l.ClaimBroken(r.claim) > 0;
    if (!l.algorithm || !Answered(l) || PromiseBroken(l) > 0 || !past) continue;
    if (Describe(*l.algorithm).bucket) {
      buckets.push_back(&l);
    } else if (*l.algorithm == Algorithm::kFixedWindow ||
               *l.algorithm == Algorithm::kAnchoredWindow ||
               *l.algorithm == Algorithm::kAnchoredWindowHalfOpen) {
      windows.push_back(&l);
    }
  }
  const auto most = [](const Limiters& ls) {
    int64_t m = 0;
    for (const LimiterReport* l : ls) m = std::max(m, l->max_in_any_window);
    return m;
  };
  const bool one_bucket = buckets.size() == 1;
  if (!buckets.empty()) {
    out.push_back(Names(buckets) + (one_bucket ? " keeps its" : " keep their") +
                  " own promise and still " + (one_bucket ? "over-admits" : "over-admit") +
                  ": a bucket admits its burst at once and refills while the window is open, so a "
                  "busy key can have its burst plus the refills, up to " +
                  std::to_string(most(buckets)) + " here, in one " + window +
                  " window, and again in the next.");
  }
  if (!windows.empty()) {
    out.push_back(Names(windows) + (windows.size() == 1 ? " keeps its" : " keep their") +
                  " own promise, " + limit + " per window, and still " +
                  (windows.size() == 1 ? "over-admits" : "over-admit") +
                  ": the end of one window and the start of the next can fall in one " + window +
                  " span, up to " + std::to_string(most(windows)) + " here.");
  }
  const auto over = [](const Limiters& ls) {
    int64_t m = 0;
    for (const LimiterReport* l : ls) m = std::max(m, l->metrics.over_admitted);
    return m;
  };
  if (!buckets.empty() && !windows.empty() && over(buckets) > over(windows)) {
    out.push_back("So the buckets over-admit more (" + std::to_string(over(buckets)) + ") than " +
                  Names(windows) + " (" + std::to_string(over(windows)) +
                  "): any busy key brings a bucket past " + Yardstick(r) +
                  ", while a window is passed only by traffic on both sides of its edge.");
  }
  return out;
}

std::vector<std::string> ExplainCosts(const RunReport& r) {
  std::vector<std::string> out = {
      "Fairness: Jain's index of the share (admitted over offered) each busy user got, 1 when "
      "all got the same share and 1/n when one got everything; the number in brackets is n, how "
      "many users were busy (offered more than " +
          std::to_string(r.claim.limit) + " in some " + r.claim.window + " window).",
      "State bytes per key: what the limiter left in its store at the end, per key that had "
      "any: a window's counters and a bucket's or GCRA's one or two numbers stay the same size "
      "whatever the limit, while a sliding log keeps a timestamp for each request it admitted in "
      "the last window, so its state grows with the limit N (up to N entries a key) and all "
      "of them with the number of keys (state grows with: keys, or keys × limit). So the state "
      "of K keys is about K times the bytes per key; a log's, measured here at N = " +
          std::to_string(r.claim.limit) +
          ", grows about in proportion for another N. Store steps per decision: store operations "
          "(commands or scripts) per answered request."};
  Limiters all;
  for (const LimiterReport& l : r.limiters) all.push_back(&l);
  out.push_back(LatencyIsReal(all)
                    ? "Latency: from send to answer, on the run's clock."
                    : "Latency: from send to answer, on the run's clock; every decision here was "
                      "answered at once, so latency does not tell the limiters apart.");
  return out;
}

}  // namespace ratelab
