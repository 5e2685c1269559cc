#include "reports/advice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/run_report.h"
#include "sim/scenario.h"

namespace ratelab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Joined(const std::vector<std::string>& sentences) {
  std::string s;
  for (const std::string& t : sentences) s += t + "\n";
  return s;
}

const Pick* PickFor(const Advice& a, const std::string& goal) {
  for (const Pick& p : a.picks) {
    if (p.goal == goal) return &p;
  }
  return nullptr;
}

// A limiter of a 5-in-any-1m run, with the claim's check broken for `broken` keys.
LimiterReport Limiter(std::string name, Algorithm algorithm, int64_t admitted, uint64_t broken) {
  LimiterReport l;
  l.name = std::move(name);
  l.algorithm = algorithm;
  l.policy = std::string(AlgorithmName(algorithm)) + " 5 per 1m";
  l.offered = 100;
  l.admitted = admitted;
  l.denied = 100 - admitted;
  l.max_in_any_window = broken > 0 ? 9 : 5;
  l.metrics.over_admitted = broken > 0 ? 12 : 0;
  l.metrics.burst_ratio = static_cast<double>(l.max_in_any_window) / 5;
  l.metrics.state_bytes_per_key = 16;
  l.metrics.steps_per_decision = 1;
  l.checks = {{CheckId::kPromise, 0}, {CheckId::kAnyWindowCap, broken}};
  return l;
}

RunReport ReportOf(std::vector<LimiterReport> limiters) {
  RunReport r;
  r.scenario = "test";
  r.claim = {5, "1m", 60000};
  r.limiters = std::move(limiters);
  return r;
}

TEST(Advice, OnTheDemoNamesTheOnlyKeeperItsCostAndThePickForEachGoal) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok());
  const RunReport r = MakeRunReport(*c);
  const Advice a = Advise(r);
  ASSERT_GE(a.summary.size(), 3u);
  EXPECT_EQ(a.summary[0],
            "Of the 5 limiters, only memory-sliding-log kept the claim 5 in any 1m per key on "
            "every key.");
  // The cost of keeping it, beside the leanest that does not.
  EXPECT_THAT(a.summary[1], HasSubstr("bytes of state per key"));
  EXPECT_THAT(a.summary[1], HasSubstr("of memory-gcra, which does not"));
  // What users lose against the exact limiter of the claim, then the per-request count apart.
  EXPECT_THAT(Joined(a.summary),
              HasSubstr("memory-sliding-counter admitted 6 fewer (189 against 195) than an exact "
                        "limiter of the claim would have on the same traffic; request by request, "
                        "it denied 21 requests at a moment the claim had room for them (its false "
                        "denials: 8.7% of the 241 it was offered)"));
  ASSERT_NE(PickFor(a, "keep the claim exactly"), nullptr);
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->limiter, "memory-sliding-log");
  ASSERT_NE(PickFor(a, "keep the least state"), nullptr);
  EXPECT_EQ(PickFor(a, "keep the least state")->limiter, "memory-gcra");
  EXPECT_THAT(PickFor(a, "keep the least state")->but, HasSubstr("up to 9 in one 1m window"));
  EXPECT_THAT(Joined(a.summary),
              HasSubstr("memory-token-bucket and memory-gcra admitted 43 each (up to 9 in one 1m "
                        "window); memory-fixed-window admitted 21"));
  // The token bucket and GCRA admit the same 209: a tie, no pick, and it names both.
  ASSERT_NE(PickFor(a, "admit the most"), nullptr);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "no meaningful difference");
  EXPECT_EQ(PickFor(a, "admit the most")->because,
            "memory-token-bucket and memory-gcra tie, each with 209 of 241 admitted");
  // One sentence to quote: the keeper, and the trade a reader may prefer.
  EXPECT_THAT(a.quote, StartsWith("Pick memory-sliding-log because it keeps the claim 5 in any 1m "
                                  "per key with 163.5 bytes of state per key, growing with the "
                                  "limit as a log does, unless admitting past the claim is "
                                  "acceptable: memory-gcra keeps 8 bytes of state per key and "
                                  "over-admits 43"));
  // Every decision took no time, so latency picks nothing.
  EXPECT_EQ(PickFor(a, "answer fastest"), nullptr);

  const std::string verdicts = Joined(ExplainVerdicts(r));
  EXPECT_THAT(verdicts, HasSubstr("memory-token-bucket and memory-gcra keep their own promise"));
  EXPECT_THAT(verdicts, HasSubstr("up to 9 here"));
  EXPECT_THAT(verdicts, HasSubstr("memory-fixed-window keeps its own promise, 5 per window"));
  EXPECT_THAT(verdicts,
              HasSubstr("So the buckets over-admit more (43) than memory-fixed-window (21)"));
  EXPECT_THAT(Joined(ExplainCosts(r)), HasSubstr("the number in brackets is n"));
  EXPECT_THAT(Joined(ExplainCosts(r)), HasSubstr("latency does not tell the limiters apart"));
}

// Two limiters that keep the claim with the same state: the sentence to quote names both, and
// no pick is made between them, for the claim or for state.
TEST(Advice, KeepersThatTieAreNamedTogetherAndNeitherIsPicked) {
  RunReport r = ReportOf(
      {Limiter("a", Algorithm::kSlidingLog, 40, 0), Limiter("b", Algorithm::kSlidingLog, 40, 0)});
  for (LimiterReport& l : r.limiters) l.metrics.state_bytes_per_key = 16;
  const Advice a = Advise(r);
  EXPECT_THAT(a.quote, StartsWith("Pick a or b because each keeps the claim 5 in any 1m per key "
                                  "with 16 bytes of state per key"));
  ASSERT_NE(PickFor(a, "keep the claim exactly"), nullptr);
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->limiter, "no meaningful difference");
  EXPECT_EQ(
      PickFor(a, "keep the claim exactly")->because,
      "a and b tie, each with 16 bytes of state per key, growing with the limit as a log does");
  EXPECT_EQ(PickFor(a, "keep the least state"), nullptr) << "their states do not differ";
}

TEST(Advice, SentencesFollowTheNumbers) {
  RunReport r = ReportOf(
      {Limiter("a", Algorithm::kSlidingLog, 40, 0), Limiter("b", Algorithm::kTokenBucket, 60, 3)});
  r.limiters[0].metrics.false_denials = 7;
  r.limiters[0].metrics.state_bytes_per_key = 160;
  r.limiters[1].metrics.state_bytes_per_key = 8;
  Advice a = Advise(r);
  EXPECT_EQ(a.summary[0],
            "Of the 2 limiters, only a kept the claim 5 in any 1m per key on every key.");
  EXPECT_EQ(a.summary[1],
            "It keeps 160 bytes of state per key and takes 1.00 store steps per decision: 20.0 "
            "times the 8 bytes of b, which does not.");
  EXPECT_EQ(a.summary[2], "Past the claim, b admitted 12 (up to 9 in one 1m window).");
  // (A report written before the exact limiter's admissions were measured.)
  EXPECT_EQ(a.summary[3],
            "a denied 7 requests at a moment the claim had room for them (its false denials: "
            "7.0% of the 100 it was offered; an exact limiter would have admitted them). The "
            "others denied none.");
  ASSERT_NE(PickFor(a, "admit the most"), nullptr);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "b");
  EXPECT_EQ(PickFor(a, "admit the most")->because, "60 of 100 admitted");
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->but,
            "keeps the claim; denies 7 the claim had room for");

  // Other numbers, other sentences.
  r.limiters[0].metrics.false_denials = 0;
  r.limiters[1].metrics.latency_ms = LatencySummary{1, 2, 3, 4};
  a = Advise(r);
  EXPECT_EQ(a.summary[3], "None denied a request the claim had room for.");
  ASSERT_NE(PickFor(a, "answer fastest"), nullptr);
  EXPECT_EQ(PickFor(a, "answer fastest")->limiter, "a");  // no latency summary: none took time

  // Ahead by less than 5% of the next: no pick, and the two named; ahead by 5%, a pick.
  r.limiters[1].admitted = 41;
  a = Advise(r);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "no meaningful difference");
  EXPECT_EQ(PickFor(a, "admit the most")->because,
            "b 41 of 100 admitted against a 40 of 100 admitted: within 5%");
  r.limiters[1].admitted = 42;
  EXPECT_EQ(PickFor(Advise(r), "admit the most")->limiter, "b");

  // With the exact limiter's admissions, what a limiter's users lose comes first.
  r.limiters[0].metrics.false_denials = 7;
  r.limiters[0].metrics.exact_admitted = 45;
  a = Advise(r);
  EXPECT_EQ(a.summary[3],
            "a admitted 5 fewer (40 against 45) than an exact limiter of the claim would have on "
            "the same traffic; request by request, it denied 7 requests at a moment the claim had "
            "room for them (its false denials: 7.0% of the 100 it was offered). The others denied "
            "none.");
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->but,
            "keeps the claim; admits 5 fewer (40 against 45) than an exact limiter");
  EXPECT_EQ(a.quote,
            "Pick a because it keeps the claim 5 in any 1m per key with 160 bytes of state per "
            "key, growing with the limit as a log does, unless admitting past the claim is "
            "acceptable: b keeps 8 bytes of state per key and over-admits 12: up to 9 in one 1m "
            "window, 1.80x the limit.");
}

TEST(Advice, OverSeedsPicksOnlyWhatLedInEverySeedAndSaysSo) {
  RunReport r = ReportOf({Limiter("log", Algorithm::kSlidingLog, 40, 0),
                          Limiter("counter", Algorithm::kSlidingCounter, 60, 0)});
  r.limiters[0].metrics.state_bytes_per_key = 160;
  r.limiters[1].metrics.state_bytes_per_key = 24;
  r.seed = 3;
  // One seed: the lead of this run decides, and the advice says that is all it is.
  Advice a = Advise(r);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "counter");
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->limiter, "counter");
  EXPECT_THAT(a.how_picked, HasSubstr("in this run, which is one seed's traffic"));
  // The counter only approximates the claim: kept on this traffic, and the sentence says so.
  r.limiters[1].protocol = "memory-sliding-counter";
  EXPECT_EQ(Advise(r).quote,
            "Pick counter because it keeps the claim 5 in any 1m per key with 24 bytes of state "
            "per key, though only on this traffic: sliding-counter does not promise the claim, "
            "and traffic shaped against it goes past it (ratelab worst memory-sliding-counter "
            "measures how far).");
  // Held to a claim looser than twice its own limit, it promises the claim: no such word.
  r.limiters[1].policy = "sliding-counter 2 per 1m";
  EXPECT_THAT(Advise(r).quote, Not(HasSubstr("though only on this traffic")));
  r.limiters[1].policy = "sliding-counter 5 per 1m";

  // Over 4 seeds: the counter led on admissions in 3 and broke the claim in one.
  LimiterSpreadReport log, counter;
  log.name = "log";
  log.picked = std::vector<GoalSeeds>{{"admit the most", 1}};
  counter.name = "counter";
  counter.seeds_over_claim = 1;
  counter.picked = std::vector<GoalSeeds>{{"admit the most", 3}, {"keep the least state", 4}};
  counter.over_admitted = {1, 4, 2};
  counter.max_in_any_window = {5, 8, 2};
  r.across_seeds = SeedsSpreadReport{1, 4, 4, {log, counter}};
  a = Advise(r);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "no meaningful difference");
  EXPECT_EQ(PickFor(a, "admit the most")->because,
            "counter 60 of 100 admitted in seed 3, but it was ahead in only 3 of the 4 seeds");
  EXPECT_EQ(PickFor(a, "keep the least state")->limiter, "counter");
  EXPECT_EQ(PickFor(a, "keep the least state")->because,
            "24 bytes of state per key; ahead in every one of the 4 seeds");
  // Only the log kept the claim in every seed.
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->limiter, "log");
  EXPECT_THAT(a.quote, StartsWith("Pick log because it keeps the claim 5 in any 1m per key (in "
                                  "all 4 seeds) with 160 bytes of state per key"));
  // What the sentence and the picks say of every seed is over every seed, not the seed shown
  // (in which the counter kept the claim): its median, and its worst.
  EXPECT_THAT(a.quote, HasSubstr("unless admitting past the claim is acceptable: counter keeps 24 "
                                 "bytes of state per key and over-admits a median of 1 over the 4 "
                                 "seeds (worst 4, in seed 2): up to 8 in one 1m window, 1.60x the "
                                 "limit."));
  EXPECT_EQ(PickFor(a, "keep the least state")->but,
            "over-admits a median of 1 over the 4 seeds (worst 4, in seed 2): up to 8 in one 1m "
            "window, 1.60x the limit");
  EXPECT_EQ(PickFor(a, "keep the claim exactly")->but, "keeps the claim in every seed");
  // Where the seeds measured each limiter's state, the sentence gives its median over them too,
  // with its worst where that differs.
  r.across_seeds->limiters[0].state_bytes_per_key = SpreadReport{150, 170, 3};
  r.across_seeds->limiters[1].state_bytes_per_key = SpreadReport{24, 24, 1};
  a = Advise(r);
  EXPECT_THAT(a.quote, StartsWith("Pick log because it keeps the claim 5 in any 1m per key (in "
                                  "all 4 seeds) with a median of 150 bytes of state per key over "
                                  "the 4 seeds (worst 170)"));
  EXPECT_THAT(a.quote, HasSubstr("counter keeps a median of 24 bytes of state per key over the 4 "
                                 "seeds and over-admits a median of 1"));
  r.across_seeds->limiters[0].state_bytes_per_key.reset();
  r.across_seeds->limiters[1].state_bytes_per_key.reset();
  // Seeds that all gave the same traffic are runs of one traffic, and every sentence of the
  // seeds says so.
  r.across_seeds->traffics = 1;
  a = Advise(r);
  EXPECT_THAT(a.quote, StartsWith("Pick log because it keeps the claim 5 in any 1m per key (in "
                                  "all 4 seeds, all of one traffic)"));
  EXPECT_EQ(PickFor(a, "keep the least state")->because,
            "24 bytes of state per key; ahead in every one of the 4 seeds, all of one traffic");
  EXPECT_THAT(Joined(a.across_seeds), HasSubstr("Every one of the 4 seeds gave the same traffic"));
  r.across_seeds->traffics = 4;
  EXPECT_THAT(Joined(Advise(r).across_seeds), Not(HasSubstr("gave the same traffic")));
  EXPECT_THAT(a.how_picked, HasSubstr("in every one of the 4 seeds"));

  // Kept in the seed shown but not in every seed: the quote names who came closest over them.
  r.across_seeds->limiters[0].seeds_over_claim = 2;
  r.across_seeds->limiters[0].over_admitted.median = 3;
  r.across_seeds->limiters[1].over_admitted.median = 1;
  EXPECT_EQ(Advise(r).quote,
            "Pick counter because it comes closest to the claim 5 in any 1m (it admitted "
            "past it in 1 of the 4 seeds, a median of 1 too many), unless the claim must hold "
            "exactly: none of these keeps it in every seed, and a sliding log would.");
  r.across_seeds->limiters[0].seeds_over_claim = 0;

  // A report written before picks were counted over seeds: the one run decides, as said.
  r.across_seeds->limiters[0].picked.reset();
  r.across_seeds->limiters[1].picked.reset();
  a = Advise(r);
  EXPECT_EQ(PickFor(a, "admit the most")->limiter, "counter");
  EXPECT_THAT(a.how_picked, HasSubstr("one seed's traffic"));
}

TEST(Advice, SaysWhenNoneOrAllKeptTheClaim) {
  RunReport r = ReportOf(
      {Limiter("a", Algorithm::kFixedWindow, 50, 2), Limiter("b", Algorithm::kGcra, 50, 1)});
  r.limiters[1].metrics.over_admitted = 4;
  EXPECT_EQ(Advise(r).summary[0],
            "None of the 2 limiters kept the claim 5 in any 1m per key on every key. The closest, "
            "b, over-admits 4: up to 9 in one 1m window, 1.80x the limit.");
  EXPECT_EQ(PickFor(Advise(r), "keep the claim exactly"), nullptr);

  r = ReportOf(
      {Limiter("a", Algorithm::kSlidingLog, 50, 0), Limiter("b", Algorithm::kSlidingLog, 50, 0)});
  const Advice a = Advise(r);
  EXPECT_EQ(a.summary[0], "All 2 limiters kept the claim 5 in any 1m per key on every key.");
  // They do not differ on state, admissions, fairness, steps or latency: one goal only.
  ASSERT_EQ(a.picks.size(), 1u);
  EXPECT_EQ(a.picks[0].goal, "keep the claim exactly");
}

TEST(Advice, OneLimiterGetsAVerdictAndNoPicks) {
  RunReport r = ReportOf({Limiter("mine", Algorithm::kFixedWindow, 50, 2)});
  Advice a = Advise(r);
  EXPECT_EQ(a.summary[0],
            "mine broke the claim 5 in any 1m per key for 2 keys. It over-admits 12: up to 9 in "
            "one 1m window, 1.80x the limit.");
  EXPECT_TRUE(a.picks.empty());

  r.limiters[0] = Limiter("mine", Algorithm::kFixedWindow, 50, 0);
  EXPECT_EQ(Advise(r).summary[0],
            "mine kept the claim 5 in any 1m per key on every key: at most 5 admitted in any 1m.");

  r.limiters[0].failed = 3;
  a = Advise(r);
  EXPECT_THAT(a.summary[0], HasSubstr("mine failed on 3 requests"));
  EXPECT_THAT(a.summary[0], HasSubstr("nothing can be concluded"));
  EXPECT_EQ(a.summary.size(), 1u);  // no denials of a limiter that failed
}

TEST(Advice, NamesBrokenPromisesFailuresAndUnansweredRequests) {
  RunReport r = ReportOf({Limiter("a", Algorithm::kSlidingLog, 50, 0),
                          Limiter("b", Algorithm::kFixedWindow, 50, 0),
                          Limiter("c", Algorithm::kGcra, 50, 0)});
  r.limiters[0].checks[0].violations = 2;  // its own promise
  r.limiters[1].failed = 1;
  r.limiters[2].unanswered = 25;
  const std::string s = Joined(Advise(r).summary);
  EXPECT_THAT(s, HasSubstr("a broke its own promise (sliding-log 5 per 1m) for 2 keys: it does "
                           "not do what its algorithm says, a defect"));
  EXPECT_THAT(s, HasSubstr("b failed on 1 request (it answered with its own error), so it is left "
                           "out of this advice."));
  EXPECT_THAT(s, HasSubstr("c left 25 of its 100 requests unanswered (25.0%)."));
  // Under faults, a broken promise may be the fail policy's choice: no blame, but where to look.
  r.faults.push_back({"store outage", 10, 20});
  EXPECT_THAT(
      Joined(Advise(r).summary),
      HasSubstr("a broke its own promise (sliding-log 5 per 1m) for 2 keys, in a run with "
                "faults: see what it decided while they lasted before calling it a defect."));
  // The one that failed is nobody's pick.
  for (const Pick& p : Advise(r).picks) EXPECT_NE(p.limiter, "b") << p.goal;
}

TEST(Advice, ExplainsOverAdmissionOnlyForLimitersThatKeepTheirPromise) {
  RunReport r = ReportOf({Limiter("bucket", Algorithm::kTokenBucket, 60, 3)});
  EXPECT_THAT(Joined(ExplainVerdicts(r)),
              HasSubstr("bucket keeps its own promise and still over-admits"));
  r.limiters[0].checks[0].violations = 1;
  EXPECT_THAT(Joined(ExplainVerdicts(r)), Not(HasSubstr("keeps its own promise")));
  r.limiters[0].algorithm.reset();  // a report written before algorithms were
  r.limiters[0].checks[0].violations = 0;
  EXPECT_THAT(Joined(ExplainVerdicts(r)), Not(HasSubstr("keeps its own promise")));
}

}  // namespace
}  // namespace ratelab
