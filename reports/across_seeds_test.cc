// A comparison over seeds: each limiter's median and worst over every seed, how many seeds broke
// each check and which first; the run shown in full is the first that broke one; the views and
// the JUnit speak for every seed, not only the one shown.
#include "reports/across_seeds.h"

#include <gtest/gtest.h>

#include "reports/views.h"
#include "sim/scenario.h"

namespace ratelab {
namespace {

RunReport Seed(uint64_t seed, int64_t over_admitted, uint64_t claim_keys, int64_t failed = 0) {
  RunReport r;
  r.seed = seed;
  LimiterReport l;
  l.name = "fw";
  l.metrics.over_admitted = over_admitted;
  l.max_in_any_window = 5 + over_admitted;
  l.metrics.steps_per_decision = 1;
  l.checks = {{CheckId::kPromise, 0}, {CheckId::kAnyWindowCap, claim_keys}};
  l.failed = failed;
  r.limiters.push_back(l);
  return r;
}

TEST(SeedsSpread, MedianWorstAndTheFirstSeedOfEach) {
  SeedsSpread spread;
  // Added out of order: the first seed is the smallest, whatever the order.
  spread.Add(Seed(7, 9, 2));
  spread.Add(Seed(3, 0, 0));
  spread.Add(Seed(5, 9, 1, 4));
  spread.Add(Seed(4, 2, 1));
  const SeedsSpreadReport s = spread.Finish(3, 10);
  EXPECT_EQ(s.first, 3u);
  EXPECT_EQ(s.last, 10u);
  EXPECT_EQ(s.count, 4u);
  ASSERT_EQ(s.limiters.size(), 1u);
  const LimiterSpreadReport& fw = s.limiters[0];
  EXPECT_EQ(fw.over_admitted.median, 5.5);  // of 0, 2, 9, 9
  EXPECT_EQ(fw.over_admitted.worst, 9);
  EXPECT_EQ(fw.over_admitted.worst_seed, 5u);  // 5 and 7 tie: the first
  EXPECT_EQ(fw.max_in_any_window.median, 10.5);
  EXPECT_EQ(fw.seeds_over_claim, 3u);
  ASSERT_EQ(fw.checks.size(), 2u);
  EXPECT_EQ(fw.checks[0].check, CheckId::kPromise);
  EXPECT_EQ(fw.checks[0].seeds, 0u);
  EXPECT_EQ(fw.checks[1].seeds, 3u);
  EXPECT_EQ(fw.checks[1].first_seed, 4u);
  EXPECT_EQ(fw.seeds_failed, 1u);
  EXPECT_EQ(fw.first_failed_seed, 5u);
  EXPECT_FALSE(fw.latency_p99_ms);

  // Seed 0 is a seed like any other.
  SeedsSpread from_zero;
  from_zero.Add(Seed(2, 1, 1, 1));
  from_zero.Add(Seed(0, 1, 1, 1));
  EXPECT_EQ(from_zero.Finish(0, 2).limiters[0].checks[1].first_seed, 0u);
  EXPECT_EQ(from_zero.Finish(0, 2).limiters[0].first_failed_seed, 0u);

  SeedsSpread odd;
  for (int64_t over : {4, 1, 3}) odd.Add(Seed(static_cast<uint64_t>(over), over, 0));
  EXPECT_EQ(odd.Finish(1, 4).limiters[0].over_admitted.median, 3);
}

// Two limiters of one seed: `a` admitting `a_admitted` and `b` 50, each of 100.
RunReport TwoLimiters(uint64_t seed, int64_t a_admitted) {
  RunReport r = Seed(seed, 0, 0);
  r.limiters[0].name = "a";
  r.limiters[0].offered = 100;
  r.limiters[0].admitted = a_admitted;
  r.limiters.push_back(r.limiters[0]);
  r.limiters[1].name = "b";
  r.limiters[1].admitted = 50;
  return r;
}

TEST(SeedsSpread, CountsTheTrafficsTheSeedsGave) {
  SeedsSpread same, different, unknown;
  for (uint64_t seed : {1, 2, 3}) {
    same.Add(Seed(seed, 0, 0), 7);
    different.Add(Seed(seed, 0, 0), seed % 2);
    unknown.Add(Seed(seed, 0, 0));
  }
  EXPECT_EQ(same.Finish(1, 3).traffics, 1u);
  EXPECT_EQ(different.Finish(1, 3).traffics, 2u);
  EXPECT_EQ(unknown.Finish(1, 3).traffics, 0u) << "not counted";
}

TEST(SeedsSpread, CountsTheSeedsInWhichEachLimiterWasPickedForAGoal) {
  SeedsSpread spread;
  spread.Add(TwoLimiters(1, 60));  // a, well ahead
  spread.Add(TwoLimiters(2, 51));  // a, but within 5%: nobody's
  spread.Add(TwoLimiters(3, 40));  // b
  spread.Add(TwoLimiters(4, 70));  // a
  const SeedsSpreadReport s = spread.Finish(1, 4);
  const auto picked = [&](size_t limiter, const std::string& goal) {
    for (const GoalSeeds& g : s.limiters[limiter].picked.value()) {
      if (g.goal == goal) return g.seeds;
    }
    return uint64_t{0};
  };
  EXPECT_EQ(picked(0, "admit the most"), 2u);
  EXPECT_EQ(picked(1, "admit the most"), 1u);
  // Both kept the claim with the same state: a tie, so neither is picked to keep it, in any seed.
  EXPECT_EQ(picked(0, "keep the claim exactly"), 0u);
  EXPECT_EQ(picked(1, "keep the claim exactly"), 0u);
  // Equal in steps and everything else: no other goal picked anyone.
  EXPECT_EQ(s.limiters[0].picked->size(), 1u);
  EXPECT_EQ(s.limiters[1].picked->size(), 1u);
}

std::string Reproduce(uint64_t seed) {
  return "ratelab compare demo.yaml --seed " + std::to_string(seed);
}

TEST(CompareAcrossSeeds, ShowsTheFirstSeedThatBrokeACheckAndSummarisesEverySeed) {
  Result<RunReport> r =
      CompareAcrossSeeds(DemoScenario(), 2, 5, Reproduce, [](uint64_t) { return true; });
  ASSERT_TRUE(r.ok()) << r.status();
  // The demo's fixed window breaks the claim from every seed: the first is shown.
  EXPECT_EQ(r->seed, 2u);
  EXPECT_EQ(r->reproduce, Reproduce(2));
  ASSERT_TRUE(r->across_seeds);
  EXPECT_EQ(r->across_seeds->count, 4u);
  ASSERT_EQ(r->across_seeds->limiters.size(), r->limiters.size());
  const LimiterSpreadReport& fw = r->across_seeds->limiters[0];
  EXPECT_EQ(fw.name, "memory-fixed-window");
  EXPECT_EQ(fw.seeds_over_claim, 4u);
  EXPECT_GE(fw.over_admitted.worst, fw.over_admitted.median);
  EXPECT_GE(fw.over_admitted.worst_seed, 2u);
  EXPECT_LE(fw.over_admitted.worst_seed, 5u);
  const LimiterSpreadReport& log = r->across_seeds->limiters[1];
  EXPECT_EQ(log.name, "memory-sliding-log");
  EXPECT_EQ(log.seeds_over_claim, 0u);
  EXPECT_EQ(log.over_admitted.worst, 0);

  // To JSON and back, unchanged.
  const nlohmann::json once = ToJson(*r);
  Result<RunReport> back = RunReportFromJson(nlohmann::json::parse(once.dump()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back), once);
  nlohmann::json wrong = once;
  wrong["across_seeds"]["limiters"][1]["over_admitted"]["worst"] = "many";
  EXPECT_EQ(RunReportFromJson(wrong).status().message(),
            "across_seeds.limiters[1].over_admitted.worst: expected a number, found a string");
}

TEST(CompareAcrossSeeds, StopsWhenToldAndSummarisesTheSeedsRun) {
  Result<RunReport> r =
      CompareAcrossSeeds(DemoScenario(), 1, 100, Reproduce, [](uint64_t done) { return done < 3; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->across_seeds->count, 3u);
  EXPECT_EQ(r->across_seeds->last, 100u);
  EXPECT_NE(RenderMarkdown(*r).find("seeds 1..3 (interrupted before 100)"), std::string::npos);
}

TEST(CompareAcrossSeeds, TheViewsSpeakForEverySeed) {
  Result<RunReport> r =
      CompareAcrossSeeds(DemoScenario(), 1, 3, Reproduce, [](uint64_t) { return true; });
  ASSERT_TRUE(r.ok());
  const std::string md = RenderMarkdown(*r);
  EXPECT_EQ(md.rfind("## ratelab: demo, seeds 1..3 (seed 1 in full)\n\n", 0), 0u) << md;
  // The recommendation opens with the seeds, in a paragraph of its own before the shown seed's;
  // then comes the table of medians and worsts.
  EXPECT_NE(md.find("the first of the range in which a check was broken or a limiter failed.\n\nOf "
                    "the 5 limiters"),
            std::string::npos);
  const size_t advice = md.find(
      "Over the 3 seeds 1..3, memory-sliding-log kept the claim 5 in any 1m in every seed; "
      "admitted past it: memory-fixed-window in 3 of 3 seeds (over-admitted: median 21, worst 29 "
      "in seed 2), ");
  ASSERT_NE(advice, std::string::npos) << md;
  EXPECT_LT(advice, md.find("| limiter | verdict over 3 seeds | over-admitted | false denials | "
                            "max in any 1m | store steps per decision |"));
  EXPECT_NE(md.find("| memory-fixed-window | broke the claim in 3 of 3 seeds |"),
            std::string::npos);
  EXPECT_NE(md.find("#### Seed 1"), std::string::npos);
  const std::string html = RenderHtml(*r, {}, "");
  EXPECT_LT(html.find("<h2 id=\"recommendation\">"), html.find("<h2 id=\"seeds\">Across seeds"));
  EXPECT_LT(html.find("<h2 id=\"seeds\">"), html.find("<h2 id=\"scenario\">"));

  // A check broken only in a seed not shown still fails its JUnit case, naming that seed.
  for (CheckSeeds& c : r->across_seeds->limiters[1].checks) {
    if (c.check == CheckId::kAnyWindowCap) c = {c.check, 1, 3};
  }
  const std::string xml = RenderJunit(*r);
  const size_t log = xml.find("classname=\"demo.memory-sliding-log\" name=\"any-window-cap\"");
  ASSERT_NE(log, std::string::npos);
  EXPECT_NE(xml.find("message=\"broken (in 1 of 3 seeds, the first seed 3)\"", log),
            std::string::npos)
      << xml;
  EXPECT_LT(xml.find("run seed 3 (--seed 3) for its witness", log), xml.find("</testcase>", log));
}

}  // namespace
}  // namespace ratelab
