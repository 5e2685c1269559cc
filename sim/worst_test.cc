// The worst-case search: it reaches the known worst cases (2N for the fixed window, 2N - 1 for the
// sliding counter and the anchored window) and never passes them, finds nothing in a correct
// limiter, holds a case to its concurrency, shows the racy protocols' breach growing with it, and
// gives the same result for the same options.
#include "sim/worst.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

using std::chrono::seconds;

WorstOptions Options(const Policy& policy, int concurrency, int64_t runs = 1500) {
  WorstOptions o;
  o.base.policy = policy;
  o.claim = DefaultWorstClaim(policy);
  o.concurrency = concurrency;
  o.runs = runs;
  return o;
}

WorstResult Worst(const std::string& protocol, const WorstOptions& o) {
  Result<WorstResult> r = SearchWorst(RegistryProtocol(protocol), o);
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return {};
  EXPECT_FALSE(r->failure) << protocol;
  return *std::move(r);
}

// The most the window algorithms can admit in a span of W, from one client: the fixed window N at
// a window's end and N at the next one's start; the sliding counter and the anchored window one
// fewer (the counter weighs the last window's N until the span ends; the anchored window's first
// request opens it a whole W before the next one can open).
TEST(Worst, ReachesTheKnownWorstOfEachWindowAlgorithmAndNeverPassesIt) {
  struct Known {
    std::string protocol;
    Algorithm algorithm;
    int64_t limit;
    int64_t worst;
  };
  for (const Known& k :
       std::vector<Known>{{"memory-fixed-window", Algorithm::kFixedWindow, 5, 10},
                          {"memory-fixed-window", Algorithm::kFixedWindow, 3, 6},
                          {"memory-sliding-counter", Algorithm::kSlidingCounter, 5, 9},
                          {"memory-sliding-counter", Algorithm::kSlidingCounter, 3, 5},
                          {"memory-anchored-window", Algorithm::kAnchoredWindow, 5, 9},
                          {"memory-sliding-log", Algorithm::kSlidingLog, 5, 5}}) {
    const WorstResult r =
        Worst(k.protocol, Options(Policy::Window(k.algorithm, k.limit, seconds(10)), 1));
    EXPECT_EQ(r.value, k.worst) << k.protocol << " at limit " << k.limit;
    ASSERT_TRUE(r.shown) << k.protocol;
    int64_t admitted = 0;
    for (const HistoryEvent& e : r.shown->witness) admitted += e.admitted();
    EXPECT_EQ(admitted, r.value) << r.shown->ToString();
    EXPECT_LT(r.shown->witness.back().invoke - r.shown->witness.front().invoke, seconds(10));
    EXPECT_LE(static_cast<int64_t>(r.best.arrivals.size()), 2 * k.worst)
        << "shrunk: " << k.protocol;
  }
}

// A read-then-write bucket spends one token once per request in flight: never over its bound
// from one client, and further over it the more clients there are. GCRA in one script: never.
TEST(Worst, ARacyBucketsBreachGrowsWithConcurrencyAndAnAtomicOneHasNone) {
  const Policy bucket = Policy::Bucket(Algorithm::kTokenBucket, 5, seconds(1));
  std::vector<int64_t> values;
  for (int concurrency : {1, 2, 4}) {
    const WorstResult r = Worst("kv-token-bucket-hgetall-hset", Options(bucket, concurrency));
    values.push_back(r.value);
    EXPECT_LE(r.allowed > 0 ? r.value : 0, (concurrency - 1) * r.allowed)
        << "each token spent at most once per request in flight";
    const WorstResult atomic =
        Worst("kv-gcra-lua", Options(Policy::Bucket(Algorithm::kGcra, 5, seconds(1)), concurrency));
    EXPECT_EQ(atomic.value, 0) << "concurrency " << concurrency;
    EXPECT_FALSE(atomic.shown);
  }
  EXPECT_EQ(values[0], 0);
  EXPECT_GT(values[1], 0);
  EXPECT_GT(values[2], values[1]);
}

// A case with more requests in flight at once than the concurrency is not one of it: the best
// case never has more.
TEST(Worst, TheBestCaseKeepsToItsConcurrency) {
  for (int concurrency : {1, 3}) {
    const WorstResult r = Worst(
        "docs-check-then-consume",
        Options(Policy::Window(Algorithm::kAnchoredWindow, 2, seconds(10)), concurrency, 600));
    std::vector<std::pair<Instant, int>> edges;
    for (const HistoryEvent& e : r.history) {
      edges.push_back({e.invoke, 1});
      edges.push_back({e.complete, -1});
    }
    std::sort(edges.begin(), edges.end());
    int in_flight = 0, most = 0;
    for (const auto& [at, delta] : edges) most = std::max(most, in_flight += delta);
    EXPECT_LE(most, concurrency);
    if (concurrency == 1) {
      EXPECT_EQ(r.value, 3) << "2N - 1 from one client";
    } else {
      EXPECT_GT(r.value, 3) << "racing requests each open the window";
    }
  }
}

// With no drawn case of its concurrency to start from, the climb starts from no requests.
TEST(Worst, ClimbsFromNothingWhenNoDrawnCaseKeepsToItsConcurrency) {
  WorstOptions o = Options(Policy::Window(Algorithm::kFixedWindow, 3, seconds(10)), 1, 600);
  o.starts = 0;
  const WorstResult r = Worst("memory-fixed-window", o);
  EXPECT_EQ(r.value, 6) << "2N, from nothing";
}

TEST(Worst, FindsTheLongestRunOfFalseDenialsAndNoneInACorrectLog) {
  const Policy log = Policy::Window(Algorithm::kSlidingLog, 3, seconds(10));
  WorstOptions o = Options(log, 1, 800);
  o.claim = CheckId::kFalseDenialStreak;
  const WorstResult zset = Worst("kv-sliding-log-zset", o);
  EXPECT_GE(zset.value, 2) << "each denial it logs denies the next";
  ASSERT_TRUE(zset.shown);
  EXPECT_EQ(static_cast<int64_t>(zset.shown->witness.size()), zset.value);
  for (const HistoryEvent& e : zset.shown->witness) EXPECT_TRUE(e.denied());
  EXPECT_EQ(Worst("memory-sliding-log", o).value, 0);
}

TEST(Worst, TheSameOptionsGiveTheSameResult) {
  const WorstOptions o =
      Options(Policy::Window(Algorithm::kSlidingCounter, 4, seconds(10)), 2, 400);
  const WorstResult a = Worst("kv-sliding-counter", o), b = Worst("kv-sliding-counter", o);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.runs, b.runs);
  EXPECT_EQ(a.found_at_run, b.found_at_run);
  EXPECT_EQ(HistoryHash(a.history), HistoryHash(b.history));
}

TEST(Worst, StopsWhenItsProgressSaysSoWithTheBestSoFar) {
  int64_t told = 0;
  const Result<WorstResult> r =
      SearchWorst(RegistryProtocol("memory-fixed-window"),
                  Options(Policy::Window(Algorithm::kFixedWindow, 2, seconds(10)), 1),
                  [&](int64_t runs, int64_t) {
                    told = runs;
                    return runs < 30;
                  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->runs, 30);
  EXPECT_EQ(told, 30);
}

TEST(WorstMeasure, OverTheBucketIsTheMostAdmittedPastBPlusSpanOverT) {
  const Policy p = Policy::Bucket(Algorithm::kTokenBucket, 2, seconds(1));
  History h;
  // Five admitted within 1.5s: the bucket allows 2 + 1 there.
  for (int i = 0; i < 5; ++i) {
    HistoryEvent e;
    e.id = i;
    e.key = "k";
    e.invoke = e.complete = FromUnixNanos(int64_t{375'000'000} * i);
    e.decision = Decision{.allowed = true};
    h.push_back(e);
  }
  const WorstMeasure m = MeasureWorst(h, p, CheckId::kOverBucket);
  EXPECT_EQ(m.value, 2);
  EXPECT_EQ(m.allowed, 3);
  ASSERT_TRUE(m.shown);
  EXPECT_EQ(m.shown->witness.size(), 5u);
  EXPECT_EQ(MostOverBucket(h, 5, seconds(1)), 0);
  EXPECT_EQ(MostOverBucket(h, 4, seconds(1)), 0) << "4 + 1 in 1.5s";
  EXPECT_EQ(MostOverBucket(h, 3, seconds(1)), 1);
}

TEST(WorstClaim, ReadsItsNamesAndRefusesOthers) {
  EXPECT_EQ(*ParseWorstClaim("over-bucket"), CheckId::kOverBucket);
  EXPECT_EQ(CheckName(*ParseWorstClaim("false-denial-streak")), "false-denial-streak");
  // A check that is no measure is refused, though it is named so elsewhere.
  EXPECT_FALSE(ParseWorstClaim("false-denials").ok());
  const Result<CheckId> bad = ParseWorstClaim("most");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "unknown claim 'most' (expected most-in-window, over-bucket or false-denial-streak)");
}

}  // namespace
}  // namespace ratelab
