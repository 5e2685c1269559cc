// junit.xml: one test case per (limiter, check), so CI shows broken checks natively, each
// failure carrying its first witness as a timeline and the command that reproduces it.
#include "reports/goals.h"
#include "reports/view_parts.h"
#include "reports/views.h"

namespace ratelab {

namespace {

// " (in 3 of 20 seeds, the first seed 4)", for a comparison over seeds.
std::string InSeeds(const RunReport& r, uint64_t seeds, uint64_t first) {
  return " (in " + std::to_string(seeds) + " of " + std::to_string(r.across_seeds->count) +
         " seeds, the first seed " + std::to_string(first) + ")";
}

}  // namespace

// With a comparison over seeds, a case fails when its check broke in any seed, and names how many
// and the first; the witness is of the seed the report shows, when it broke there.
std::string RenderJunit(const RunReport& r, double seconds) {
  std::vector<view_parts::JunitCase> cases;
  const std::string reproduce = r.reproduce ? "reproduce: " + *r.reproduce + "\n" : "";
  view_parts::ForEachCheck(r, [&](const LimiterReport& l, const CheckCount& check) {
    view_parts::JunitCase c{
        r.scenario + "." + l.name, std::string(CheckName(check.check)), seconds, "", "", false};
    if (const LimiterSpreadReport* spread = SpreadOf(r, l.name)) {
      for (const CheckSeeds& in : spread->checks) {
        if (in.check != check.check || in.seeds == 0) continue;
        c.message = "broken" + InSeeds(r, in.seeds, in.first_seed);
        if (check.violations == 0) {
          c.failure = "seed " + std::to_string(r.seed) + " kept it; run seed " +
                      std::to_string(in.first_seed) + " (--seed " + std::to_string(in.first_seed) +
                      ") for its witness\n";
        }
      }
    }
    if (check.violations > 0) {
      const std::vector<const ViolationReport*> first = view_parts::ViolationsOf(l, check.check, 1);
      c.message =
          (c.message.empty() ? "" : c.message + "; in seed " + std::to_string(r.seed) + ", ") +
          view_parts::Verdict(check.violations);
      if (!first.empty()) {
        c.message += ": " + first[0]->summary;
        c.failure = view_parts::WitnessText(*first[0], r.faults);
      }
      c.failure += reproduce;
    }
    cases.push_back(std::move(c));
  });
  // A limiter that answered with its own error: the run of it is an error, not a verdict.
  for (const LimiterReport& l : r.limiters) {
    const LimiterSpreadReport* spread = SpreadOf(r, l.name);
    if (l.failed == 0 && (spread == nullptr || spread->seeds_failed == 0)) continue;
    std::string message =
        spread == nullptr ? ""
                          : "failed" + InSeeds(r, spread->seeds_failed, spread->first_failed_seed);
    if (l.failed > 0) {
      message += (message.empty() ? "" : "; in seed " + std::to_string(r.seed) + ", ") +
                 std::to_string(l.failed) + " request(s) failed: " + l.failure;
    }
    cases.push_back({r.scenario + "." + l.name, "decides without failing", seconds,
                     std::move(message), reproduce, true});
  }
  return view_parts::JunitDocument("ratelab." + r.scenario, cases, seconds);
}

std::string RenderSweepJunit(const SweepReport& s,
                             const std::function<std::string(uint64_t)>& reproduce,
                             double seconds) {
  std::vector<view_parts::JunitCase> cases;
  uint64_t passed = 0;
  for (const SeedReport& seed : s.seeds) {
    if (seed.violations == 0 && seed.failed == 0) {
      ++passed;
      continue;
    }
    view_parts::JunitCase c{s.scenario, "seed " + std::to_string(seed.seed), 0, "", "", false};
    c.message = seed.failed > 0 ? std::to_string(seed.failed) + " request(s) failed"
                                : std::to_string(seed.violations) + " violation(s)";
    c.failure = "reproduce: " + reproduce(seed.seed) + "\n";
    c.error = seed.failed > 0;
    cases.push_back(std::move(c));
  }
  // The seeds that kept every check, as one case: a sweep can hold a million.
  if (passed > 0) {
    cases.push_back(
        {s.scenario, std::to_string(passed) + " seed(s) that kept every check", 0, "", "", false});
  }
  return view_parts::JunitDocument("ratelab." + s.scenario, cases, seconds);
}

std::string SeedsBroken(uint64_t broken, uint64_t seeds) {
  if (broken == 0) {
    return seeds == 1 ? "the one seed kept every check"
                      : "every one of the " + std::to_string(seeds) + " seeds kept every check";
  }
  return std::to_string(broken) + " of " + std::to_string(seeds) +
         (seeds == 1 ? " seed" : " seeds") + " broke a check";
}

}  // namespace ratelab
