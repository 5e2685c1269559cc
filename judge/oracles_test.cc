#include "judge/oracles.h"

#include <gtest/gtest.h>

#include "testing/time.h"

namespace ratelab {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// A history of single-unit requests for key "u" at the given offsets, all with `decision`.
History At(std::initializer_list<Duration> offsets, bool allowed = true,
           Duration retry_after = Duration(0)) {
  History h;
  for (Duration off : offsets) {
    HistoryEvent e;
    e.id = static_cast<int64_t>(h.size());
    e.key = "u";
    e.invoke = e.apply = e.complete = kT0 + off;
    e.decision = Decision{allowed, 0, 0, {}, retry_after};
    h.push_back(e);
  }
  return h;
}

// Request `id` of key "u", sent at `sent` and taken by the store (one step) at `at_store`,
// answered a millisecond later.
HistoryEvent SentAndStored(int64_t id, Duration sent, Duration at_store, bool allowed,
                           Duration retry_after = {}) {
  HistoryEvent e;
  e.id = id;
  e.key = "u";
  e.invoke = kT0 + sent;
  e.apply = kT0 + at_store;
  e.complete = kT0 + at_store + milliseconds(1);
  e.steps.push_back({"EVALSHA", kT0 + at_store});
  e.decision = Decision{allowed, 0, 0, {}, retry_after};
  return e;
}

TEST(AnyWindowCapOracle, BoundaryBurstIsTwiceTheLimitWithAMinimalWitness) {
  // 3 just before the 12:01 edge, 3 just after: each aligned window holds 3.
  History h = At({milliseconds(59'700), milliseconds(59'800), milliseconds(59'900), seconds(60),
                  milliseconds(60'100), milliseconds(60'200)});
  EXPECT_TRUE(CheckAlignedWindowCap(h, 3, minutes(1)).empty());
  AnyWindowReport r = CheckAnyWindowCap(h, 3, minutes(1));
  EXPECT_EQ(r.max_in_any_window, 6);
  ASSERT_EQ(r.violations.size(), 1u);
  EXPECT_EQ(r.violations[0].witness.size(), 4u) << "N + 1 events suffice";
  EXPECT_EQ(r.violations[0].summary,
            "4 admitted in [12:00:59.700, 12:01:00.000] (span 300ms < 1m), limit 3 per 1m");
}

TEST(AnyWindowCapOracle, AnEntryLeavesTheWindowAfterExactlyW) {
  History h = At({seconds(0), seconds(10), seconds(20)});
  EXPECT_EQ(CheckAnyWindowCap(h, 1, seconds(10)).max_in_any_window, 1);
  EXPECT_EQ(CheckAnyWindowCap(h, 1, seconds(10) + Duration(1)).max_in_any_window, 2);
}

TEST(AnyWindowCapOracle, AClosedWindowStillHoldsAnEntryExactlyWAfter) {
  // sliding-log-closed: [t - W, t] holds both ends, so entries W apart share a window.
  const History h = At({seconds(0), seconds(10), seconds(20)});
  const AnyWindowReport closed = CheckAnyWindowCap(h, 1, seconds(10), WindowEdge::kClosed);
  EXPECT_EQ(closed.max_in_any_window, 2);
  ASSERT_EQ(closed.violations.size(), 1u);
  EXPECT_EQ(closed.violations[0].summary,
            "2 admitted in [12:00:00.000, 12:00:10.000] (span 10s <= 10s), limit 1 per 10s");
  EXPECT_EQ(CheckPromise(h, Policy::Window(Algorithm::kSlidingLogClosed, 1, seconds(10))).size(),
            1u);
  EXPECT_TRUE(CheckPromise(h, Policy::Window(Algorithm::kSlidingLog, 1, seconds(10))).empty());
}

TEST(AnchoredGridCapOracle, WindowsFollowOnFromTheFirstAdmissionAndStartAfreshAfterAGap) {
  // Limit 2 per 10s from the first admission at 3s: windows [3s, 13s), [13s, 23s), ...
  EXPECT_TRUE(
      CheckAnchoredGridCap(At({seconds(3), seconds(12), seconds(13), seconds(22)}), 2, seconds(10))
          .empty());
  const std::vector<Violation> v =
      CheckAnchoredGridCap(At({seconds(3), seconds(13), seconds(14), seconds(22)}), 2, seconds(10));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].summary,
            "3 admitted in the window of the key's own grid, [12:00:13.000, 12:00:23.000), limit "
            "2 per 10s");
  EXPECT_EQ(v[0].witness.size(), 3u);
  // Aligned to the epoch, [10s, 20s) holds three of these; the grid's [3s, 13s) and [13s, 23s)
  // two each.
  const History grid = At({seconds(3), seconds(12), seconds(13), seconds(19)});
  EXPECT_EQ(CheckAlignedWindowCap(grid, 2, seconds(10)).size(), 1u);
  EXPECT_TRUE(CheckAnchoredGridCap(grid, 2, seconds(10)).empty());
  // After a whole empty window (none in [13s, 23s)), the admission at 25s starts a new grid.
  EXPECT_TRUE(
      CheckAnchoredGridCap(At({seconds(3), seconds(4), seconds(25), seconds(34)}), 2, seconds(10))
          .empty());
  EXPECT_EQ(CheckAnchoredGridCap(
                At({seconds(3), seconds(4), seconds(25), seconds(34), seconds(34)}), 2, seconds(10))
                .size(),
            1u);
}

// `h` with a request at `at` that reached the store (a step there) but got no answer: a crash
// took it, after the store may have admitted it.
History WithLost(History h, Duration at) {
  HistoryEvent e;
  e.id = 100;
  e.key = "u";
  e.invoke = e.apply = kT0 + at;
  e.steps.push_back({"EVALSHA", kT0 + at});
  h.push_back(e);
  return h;
}

TEST(AnchoredWindowCapOracle, ALostRequestThatMayHaveOpenedTheWindowExcusesALaterOne) {
  // Limit 2 per 10s. Admitted at 1s, 10.5s, 11s: counted from 1s, the window [1s, 11s] holds 3.
  const History sure = At({seconds(1), milliseconds(10'500), seconds(11)});
  ASSERT_EQ(CheckAnchoredWindowCap(sure, 2, seconds(10)).size(), 1u);
  // But a request at 0s reached the store and its answer was lost: if the store admitted it,
  // its window [0s, 10s] held it and the one at 1s, and 10.5s opened the next. Not a breach.
  EXPECT_TRUE(CheckAnchoredWindowCap(WithLost(sure, seconds(0)), 2, seconds(10)).empty());
  // A lost request that could not have moved any window excuses nothing.
  const History four = At({seconds(1), seconds(2), seconds(3)});
  EXPECT_EQ(CheckAnchoredWindowCap(WithLost(four, seconds(0)), 2, seconds(10)).size(), 1u);
  // One that never reached the store cannot have opened anything.
  History unsent = WithLost(sure, seconds(0));
  unsent.back().steps = StepList();
  EXPECT_EQ(CheckAnchoredWindowCap(unsent, 2, seconds(10)).size(), 1u);
}

TEST(PromiseOracle, AnAdmissionInTheTickOfAClosedWindowsEdgeGetsTheDoubt) {
  // A window opened at 10.818108s, kept by a store that counts whole milliseconds: opened in the
  // tick 10.818, closing at 20.818108. A request at 20.818502 is after it in real time, but in
  // the same millisecond as its edge: at the millisecond both read 20.818.
  const Policy anchored = Policy::Window(Algorithm::kAnchoredWindow, 1, seconds(10));
  History h = At({milliseconds(10'818), milliseconds(20'818)});
  EXPECT_EQ(CheckPromise(h, anchored).size(), 1u) << "to the nanosecond, the edge holds both";
  EXPECT_TRUE(CheckPromise(h, anchored, milliseconds(1)).empty());
  // One tick short of the edge is inside whatever the nanoseconds were.
  h = At({milliseconds(10'818), milliseconds(20'817)});
  ASSERT_EQ(CheckPromise(h, anchored, milliseconds(1)).size(), 1u);
  EXPECT_NE(
      CheckPromise(h, anchored, milliseconds(1))[0].summary.find("[12:00:10.818, 12:00:20.818)"),
      std::string::npos)
      << CheckPromise(h, anchored, milliseconds(1))[0].summary;
  // The same for the closed sliding log.
  const Policy closed = Policy::Window(Algorithm::kSlidingLogClosed, 1, seconds(10));
  h = At({milliseconds(10'818), milliseconds(20'818)});
  EXPECT_EQ(CheckPromise(h, closed).size(), 1u);
  EXPECT_TRUE(CheckPromise(h, closed, milliseconds(1)).empty());
}

TEST(AnchoredWindowCapOracle, TheWitnessWritesTheEdgeApartFromTheRequest) {
  // The window closes at 10.0000002s, the second admission comes at 10.0000001s: to the
  // millisecond (and the microsecond) both are 10.000, so the summary writes them to the
  // nanosecond.
  const History h = At({Duration(200), seconds(10) + Duration(100)});
  const std::vector<Violation> v = CheckAnchoredWindowCap(h, 1, seconds(10));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].summary.find("12:00:10.000000200]"), std::string::npos) << v[0].summary;
}

TEST(FalseDenialsOracle, ADenialAfterTheStoreTookALateRequestIsJudgedInTheStoresOrderToo) {
  // Burst 2, one per 10s, on the client's clock. Sent at 0s, the first request reached the store
  // at 2s, after the one sent at 1s: the store decided it on the state it then had (as of 1s),
  // so the refill between 0s and 1s never happened there.
  const Policy p = Policy::Bucket(Algorithm::kTokenBucket, 2, seconds(10));
  const History late = {SentAndStored(0, seconds(0), seconds(2), true),
                        SentAndStored(1, seconds(1), seconds(1), true)};
  // Sent at 10.5s: in the order sent the bucket holds 1.05 tokens, in the store's 0.95.
  History h = late;
  h.push_back(SentAndStored(2, milliseconds(10'500), milliseconds(10'500), false));
  EXPECT_TRUE(CheckFalseDenials(h, p).empty());
  // At 11.5s both orders have a token: the denial is false whichever order the store took.
  h = late;
  h.push_back(SentAndStored(2, milliseconds(11'500), milliseconds(11'500), false));
  EXPECT_EQ(CheckFalseDenials(h, p).size(), 1u);
}

// A pacer's admission, judged (as AsDecided puts it) at its decision's instant plus its wait: one
// token a second; the first admitted at 0s, the second decided at 0.1s. Its wait of 0.9s is the
// model's; 1.9s is a second longer than needed, a false denial for that second, unless its waits
// come in whole seconds that it may round up.
TEST(FalseDenialsOracle, AWaitLongerThanTheModelNeedsIsFlagged) {
  const Policy p = Policy::Bucket(Algorithm::kTokenBucket, 1, seconds(1));
  const auto paced = [&](Duration wait) {
    HistoryEvent second = SentAndStored(1, milliseconds(100), milliseconds(100), true);
    second.decision->wait = wait;
    second.invoke += wait;
    return History{SentAndStored(0, seconds(0), seconds(0), true), second};
  };
  EXPECT_TRUE(CheckFalseDenials(paced(milliseconds(900)), p).empty());
  const std::vector<Violation> v = CheckFalseDenials(paced(milliseconds(1'900)), p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].witness.front().id, 1);
  EXPECT_NE(v[0].summary.find("made to wait 1.9s at 12:00:00.100 although token-bucket burst 1, "
                              "one per 1s had room for it after 900ms: 1s longer than needed"),
            std::string::npos)
      << v[0].summary;
  EXPECT_TRUE(CheckFalseDenials(paced(milliseconds(1'900)), p, seconds(1)).empty());
  // A request lost before it may have held the pacer's slot for as long: not judged.
  History lost = paced(milliseconds(1'900));
  lost.insert(lost.begin() + 1, SentAndStored(2, milliseconds(50), milliseconds(50), true));
  lost[1].decision.reset();
  EXPECT_TRUE(CheckFalseDenials(lost, p).empty());
}

TEST(RetryAfterOracle, AWaitIsJudgedInTheStoresOrderToo) {
  // Burst 2, one per 10s: sent at 0s, the first request reached the store at 2s, after the one
  // sent at 1s. In the store's order the bucket was empty at 1s, and at 9.5s holds 0.85 tokens:
  // 1.5s to wait. In the order sent, 0.95 tokens and 0.5s.
  const Policy p = Policy::Bucket(Algorithm::kTokenBucket, 2, seconds(10));
  History h = {
      SentAndStored(0, seconds(0), seconds(2), true, {}),
      SentAndStored(1, seconds(1), seconds(1), true, {}),
      SentAndStored(2, milliseconds(9'500), milliseconds(9'500), false, milliseconds(1'500))};
  EXPECT_TRUE(CheckRetryAfter(h, p).empty());
  // A wait neither order gives is wrong.
  h.back().decision->retry_after = seconds(1);
  EXPECT_EQ(CheckRetryAfter(h, p).size(), 1u);
}

TEST(FalseDenialsOracle, AnAnchoredWindowOpensAtTheRequestTheStoreTookFirst) {
  // Limit 2 per 10s, a window from the key's first request. Sent at 0s, the first request
  // reached the store at 2s, after the one sent at 1s: the store opened the window at 1s (and
  // took the late one into it), so a request at 10.5s is still inside it. In the order sent, the
  // window [0s, 10s] would have closed.
  const Policy p = Policy::Window(Algorithm::kAnchoredWindow, 2, seconds(10));
  History h = {SentAndStored(0, seconds(0), seconds(2), true),
               SentAndStored(1, seconds(1), seconds(1), true),
               SentAndStored(2, milliseconds(10'500), milliseconds(10'500), false)};
  EXPECT_TRUE(CheckFalseDenials(h, p).empty());
  // At 11.5s the window opened at 1s has closed too: false whichever order the store took.
  h.back().invoke = h.back().apply = kT0 + milliseconds(11'500);
  h.back().complete = h.back().apply + milliseconds(1);
  h.back().steps = StepList();
  h.back().steps.push_back({"EVALSHA", h.back().apply});
  EXPECT_EQ(CheckFalseDenials(h, p).size(), 1u);
}

TEST(FalseDenialsOracle, AnAnchoredWindowsDenialIsJudgedUnderEveryChoiceOfLostRequests) {
  const Policy p = Policy::Window(Algorithm::kAnchoredWindow, 2, seconds(10));
  // Admitted at 1s and 2s, denied at 10.5s: the window opened at 1s holds two through 11s.
  History h = At({seconds(1), seconds(2)});
  History denied = At({milliseconds(10'500)}, /*allowed=*/false);
  denied[0].id = 2;
  h.push_back(denied[0]);
  EXPECT_TRUE(CheckFalseDenials(h, p).empty());
  // A lost request at 0s: counted as admitted, its window [0s, 10s] closes before 10.5s, which
  // then had room; not counted, the denial was right. Only what holds either way is flagged.
  EXPECT_TRUE(CheckFalseDenials(WithLost(h, seconds(0)), p).empty());
  // Denied at 12s: room whatever the lost request was.
  h.back().invoke = h.back().apply = h.back().complete = kT0 + seconds(12);
  EXPECT_EQ(CheckFalseDenials(WithLost(h, seconds(0)), p).size(), 1u);
}

TEST(AlignedWindowCapOracle, FlagsTheFirstOverfullWindow) {
  History h = At({seconds(1), seconds(2), seconds(3)});
  std::vector<Violation> v = CheckAlignedWindowCap(h, 2, minutes(1));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].witness.size(), 3u);
  EXPECT_EQ(v[0].summary, "3 admitted in window [12:00:00.000, 12:01:00.000), limit 2 per 1m");
}

TEST(AlignedWindowCapOracle, DeniedAndUnansweredRequestsDoNotCount) {
  History h = At({seconds(1), seconds(2)});
  History denied = At({seconds(3)}, /*allowed=*/false);
  denied[0].id = 7;
  h.push_back(denied[0]);
  h.push_back(HistoryEvent{8, "u", 0, 1, kT0, kT0, kT0, kT0, std::nullopt, {}, -1, ""});
  EXPECT_TRUE(CheckAlignedWindowCap(h, 2, minutes(1)).empty());
}

TEST(BucketConformanceOracle, AllowsBurstPlusRefill) {
  // Burst 2, one per second: 2 at 0s, 1 at 1s, 1 at 2s conform; a 5th at 2s does not.
  History ok = At({seconds(0), seconds(0), seconds(1), seconds(2)});
  EXPECT_TRUE(CheckBucketConformance(ok, 2, seconds(1)).empty());
  History bad = At({seconds(0), seconds(0), seconds(1), seconds(2), seconds(2)});
  std::vector<Violation> v = CheckBucketConformance(bad, 2, seconds(1));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].summary,
            "5 admitted in [12:00:00.000, 12:00:02.000] (span 2s), bucket allows at most 2 + "
            "2s / 1s = 4");
  EXPECT_EQ(v[0].witness.size(), 5u);
}

TEST(BucketConformanceOracle, OnCreditTheLastAdmissionNeedsOneToken) {
  // Burst 2, one per second: at 0s a request of cost 1, then one of cost 5 with one token left,
  // 4 tokens owed: on credit that conforms; a bucket that wants the whole cost does not.
  History h = At({seconds(0), seconds(0)});
  h[1].cost = 5;
  EXPECT_TRUE(CheckBucketConformance(h, 2, seconds(1), BucketCredit::kOneToken).empty());
  EXPECT_EQ(CheckBucketConformance(h, 2, seconds(1)).size(), 1u);
  // The debt is waited off, and then a token more: one at 4s (the debt just paid) is over even on
  // credit, one at 5s is not (as Guava's next free ticket is 5s).
  History early = h;
  early.push_back(At({seconds(4)})[0]);
  early.back().id = 2;
  const std::vector<Violation> v =
      CheckBucketConformance(early, 2, seconds(1), BucketCredit::kOneToken);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].summary.find("the last admitted counting 1 on credit"), std::string::npos)
      << v[0].summary;
  EXPECT_EQ(MostOverBucket(early, 2, seconds(1), BucketCredit::kOneToken), 1);
  History waited = h;
  waited.push_back(At({seconds(5)})[0]);
  waited.back().id = 2;
  EXPECT_TRUE(CheckBucketConformance(waited, 2, seconds(1), BucketCredit::kOneToken).empty());
  EXPECT_EQ(MostOverBucket(waited, 2, seconds(1), BucketCredit::kOneToken), 0);
}

TEST(BucketConformanceOracle, WitnessStartsWhereTheBucketWasLastFull) {
  History h = At({seconds(0), seconds(100), seconds(100), seconds(100)});
  std::vector<Violation> v = CheckBucketConformance(h, 2, seconds(1));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].witness.size(), 3u);
  EXPECT_EQ(v[0].witness.front().invoke, kT0 + seconds(100));
}

TEST(FalseDenialsOracle, FlagsADenialTheModelWouldAdmit) {
  const Policy p = Policy::Window(Algorithm::kSlidingLog, 2, seconds(10));
  History h = At({seconds(0), seconds(1)});
  History denied = At({milliseconds(10'500)}, false, seconds(1));
  denied[0].id = 2;
  h.push_back(denied[0]);
  std::vector<Violation> v = CheckFalseDenials(h, p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, CheckId::kFalseDenials);
  EXPECT_EQ(v[0].summary,
            "denied at 12:00:10.500 although sliding-log 2 per 10s had room (1 left before this "
            "request of cost 1)");
  denied[0].invoke = kT0 + seconds(9);
  h.back() = denied[0];
  EXPECT_TRUE(CheckFalseDenials(h, p).empty());
}

TEST(FalseDenialsOracle, ExcusesADenialConcurrentWithALostRequestThatReachedTheStore) {
  // Limit 1. B is sent at 1ms and denied at 9ms; A, sent at 2ms, spent the token at 6ms (its
  // step reached the store) and then lost its answer in a crash. The store took A first.
  const Policy p = Policy::Window(Algorithm::kFixedWindow, 1, seconds(10));
  History h = At({milliseconds(1)}, /*allowed=*/false, seconds(9));
  h[0].complete = kT0 + milliseconds(9);
  HistoryEvent lost{1, "u", 0, 1, kT0 + milliseconds(2), {}, {}, {}, std::nullopt, {}, -1, ""};
  lost.steps.push_back({"EVAL", kT0 + milliseconds(6)});
  h.push_back(lost);
  EXPECT_TRUE(CheckFalseDenials(h, p).empty());
  // Had A's step landed after B's answer, B's denial had no excuse.
  h[1].steps[0].at = kT0 + milliseconds(9) + Duration(1);
  h[0].complete = kT0 + milliseconds(9);
  h[1].invoke = kT0 + milliseconds(9) + Duration(1);
  EXPECT_EQ(CheckFalseDenials(h, p).size(), 1u);
}

TEST(RetryAfterOracle, FlagsAWaitThatIsNotTheExactOne) {
  const Policy p = Policy::Window(Algorithm::kFixedWindow, 1, minutes(1));
  History h = At({seconds(0)});
  History denied = At({seconds(20)}, false, seconds(40));
  denied[0].id = 1;
  h.push_back(denied[0]);
  EXPECT_TRUE(CheckRetryAfter(h, p).empty());
  h.back().decision->retry_after = seconds(41);
  std::vector<Violation> v = CheckRetryAfter(h, p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].summary,
            "denied at 12:00:20.000 with retry after 41s; the exact wait under fixed-window 1 "
            "per 1m is 40s");
}

TEST(RetryAfterOracle, InWholeSecondsTheWaitIsRoundedUpNeverDown) {
  const Policy p = Policy::Window(Algorithm::kFixedWindow, 1, minutes(1));
  History h = At({seconds(0)});
  History denied = At({seconds(20) + milliseconds(300)}, false, seconds(40));
  denied[0].id = 1;
  h.push_back(denied[0]);
  // The exact wait is 39.7s: 40s in whole seconds.
  EXPECT_TRUE(CheckRetryAfter(h, p, seconds(1)).empty());
  EXPECT_EQ(CheckRetryAfter(h, p).size(), 1u) << "not to the nanosecond";
  h.back().decision->retry_after = seconds(39);
  std::vector<Violation> v = CheckRetryAfter(h, p, seconds(1));
  ASSERT_EQ(v.size(), 1u) << "rounded down: the client would come back too early";
  EXPECT_EQ(v[0].summary,
            "denied at 12:00:20.300 with retry after 39s; the exact wait under fixed-window 1 "
            "per 1m is 39.7s, 40s rounded up");
  h.back().decision->retry_after = seconds(41);
  EXPECT_EQ(CheckRetryAfter(h, p, seconds(1)).size(), 1u) << "a second too late";
}

// A script deciding on a millisecond clock that answers its wait as a fraction of a millisecond
// ("retry after 384.37295ms", floating point): within the millisecond it can tell, that is the
// exact wait; a whole millisecond either way is not.
TEST(RetryAfterOracle, AFractionFinerThanTheLimitersUnitIsNoDifference) {
  const Policy p = Policy::Window(Algorithm::kFixedWindow, 1, seconds(1));
  History h = At({milliseconds(0)});
  History denied = At({milliseconds(615) + microseconds(627)}, false, Duration(384'372'950));
  denied[0].id = 1;
  h.push_back(denied[0]);
  // The exact wait is 384.373ms.
  const Duration exact(1);  // answered as it comes, not rounded
  EXPECT_TRUE(CheckRetryAfter(h, p, exact, milliseconds(1)).empty());
  EXPECT_EQ(CheckRetryAfter(h, p).size(), 1u) << "to the nanosecond, 50ns short";
  h.back().decision->retry_after = Duration(384'373'000) + Duration(40);  // float noise above
  EXPECT_TRUE(CheckRetryAfter(h, p, exact, milliseconds(1)).empty());
  h.back().decision->retry_after = Duration(383'373'000);
  EXPECT_EQ(CheckRetryAfter(h, p, exact, milliseconds(1)).size(), 1u) << "a millisecond short";
  h.back().decision->retry_after = Duration(385'373'000);
  EXPECT_EQ(CheckRetryAfter(h, p, exact, milliseconds(1)).size(), 1u) << "a millisecond long";
}

// `h` with each request answered `latency` after it was sent.
History AnsweredAfter(History h, Duration latency) {
  for (HistoryEvent& e : h) e.complete = e.invoke + latency;
  return h;
}

TEST(IntervalOracles, InstantAnswersAreJudgedLikeThePointOracles) {
  const Policy window = Policy::Window(Algorithm::kFixedWindow, 2, seconds(1));
  const History h = At({milliseconds(100), milliseconds(200), milliseconds(300)});
  std::optional<std::vector<Violation>> v =
      CheckPromiseOverIntervals(h, window, seconds(10), false);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].witness.size(), 3u);
  EXPECT_EQ((*v)[0].summary,
            "3 admitted, each sent and answered within [12:00:00.100, 12:00:00.300] (span 200ms), "
            "all in one aligned window, limit 2 per 1s");
}

TEST(IntervalOracles, AnAnswerThatCrossesTheWindowEdgeMayBelongToTheNextWindow) {
  const Policy window = Policy::Window(Algorithm::kFixedWindow, 2, seconds(1));
  History h =
      AnsweredAfter(At({milliseconds(900), milliseconds(950), milliseconds(990)}), milliseconds(5));
  EXPECT_EQ(CheckAlignedWindowCap(h, 2, seconds(1)).size(), 1u) << "judged at invoke";
  h.back().complete = kT0 + milliseconds(1001);
  EXPECT_TRUE(CheckPromiseOverIntervals(h, window, seconds(10), false)->empty());
}

TEST(IntervalOracles, TheLogCountsOnlySetsAnsweredWithinLessThanW) {
  const Policy log = Policy::Window(Algorithm::kSlidingLog, 2, seconds(1));
  History h =
      AnsweredAfter(At({milliseconds(0), milliseconds(500), milliseconds(990)}), milliseconds(10));
  EXPECT_TRUE(CheckPromiseOverIntervals(h, log, seconds(10), false)->empty()) << "span exactly W";
  h.back().complete -= Duration(1);
  std::optional<std::vector<Violation>> v = CheckPromiseOverIntervals(h, log, seconds(10), false);
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].invariant, CheckId::kAnyWindowCap);
  EXPECT_EQ((*v)[0].witness.size(), 3u);
}

TEST(IntervalOracles, TwoRacersSpendingOneTokenAreABreachUnlessTheirAnswersTookLonger) {
  // Burst 1, one token a second: two admissions answered within 2ms of each other break it.
  const Policy bucket = Policy::Bucket(Algorithm::kTokenBucket, 1, seconds(1));
  History h = AnsweredAfter(At({milliseconds(0), milliseconds(1)}), milliseconds(1));
  std::optional<std::vector<Violation>> v =
      CheckPromiseOverIntervals(h, bucket, seconds(10), false);
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].summary,
            "2 admitted, each sent and answered within [12:00:00.000, 12:00:00.002] (span 2ms), "
            "bucket allows at most 1 + span / 1s");
  // An answer a second late: the second decision may have come with the next token.
  h.back().complete = kT0 + seconds(1) + milliseconds(1);
  EXPECT_TRUE(CheckPromiseOverIntervals(h, bucket, seconds(10), false)->empty());
  // Spans longer than the horizon are not searched.
  h.back().complete = kT0 + milliseconds(2);
  EXPECT_TRUE(CheckPromiseOverIntervals(h, bucket, Duration(1), false)->empty());
}

TEST(IntervalOracles, TheAnchoredWindowIsHeldToTwoWindowsInAnySpanOfW) {
  const Policy anchored = Policy::Window(Algorithm::kAnchoredWindow, 2, seconds(10));
  // Two windows' worth across an edge, wherever the windows opened: 4 in 10s can be right.
  History h = At({seconds(0), seconds(1), seconds(9), seconds(10)});
  EXPECT_TRUE(CheckPromiseOverIntervals(h, anchored, seconds(1), false)->empty());
  // A fifth within the same 10s is a breach wherever each decision fell.
  History five = At({seconds(0), seconds(1), seconds(5), seconds(9), seconds(10)});
  const std::vector<Violation> v = *CheckPromiseOverIntervals(five, anchored, seconds(1), false);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, CheckId::kAnchoredWindowCap);
  EXPECT_EQ(v[0].witness.size(), 5u);
  // Answered later than W after the first was sent: they may have fallen in three windows.
  five.back().complete = kT0 + seconds(10) + Duration(1);
  EXPECT_TRUE(CheckPromiseOverIntervals(five, anchored, seconds(1), false)->empty());
}

// A key quiet before (no traffic before the history, or every window it may have opened closed):
// its next window opens no earlier than its next request was sent, and holds every admission
// answered within W of that.
TEST(IntervalOracles, TheAnchoredWindowAQuietKeyOpensIsHeldToTheLimit) {
  const Policy anchored = Policy::Window(Algorithm::kAnchoredWindow, 2, seconds(10));
  const History four = At({seconds(0), seconds(1), seconds(9), seconds(10)});
  EXPECT_TRUE(CheckPromiseOverIntervals(four, anchored, seconds(1), false)->empty())
      << "a window opened before the history may have held the first";
  std::vector<Violation> v = *CheckPromiseOverIntervals(four, anchored, seconds(1), true);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].invariant, CheckId::kAnchoredWindowCap);
  EXPECT_EQ(v[0].witness.size(), 3u);
  EXPECT_NE(v[0].summary.find("3 admitted, each sent and answered within [12:00:00.000, "
                              "12:00:09.000]"),
            std::string::npos)
      << v[0].summary;
  // Answered after the window its first request opened at the earliest: it may be the next's.
  History late = AnsweredAfter(At({seconds(0), seconds(1), seconds(9)}), Duration(0));
  late[2].complete = kT0 + seconds(10) + Duration(1);
  EXPECT_TRUE(CheckPromiseOverIntervals(late, anchored, seconds(1), true)->empty());
  // After a quiet spell longer than W, unseen history or not: the same three from 20s on.
  History later = At({seconds(0), seconds(20), seconds(21), seconds(29)});
  v = *CheckPromiseOverIntervals(later, anchored, seconds(1), false);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].witness.front().invoke, kT0 + seconds(20));
  // A request with no answer may have been admitted at any instant since: no quiet after it.
  History lost = later;
  lost[0].decision.reset();
  lost[0].steps.push_back({"EVALSHA", lost[0].invoke});
  EXPECT_TRUE(CheckPromiseOverIntervals(lost, anchored, seconds(1), false)->empty());
}

TEST(MostAdmittedBetween, IsWhatACorrectLimiterCanReach) {
  const Instant from = kT0 + milliseconds(500);
  const Instant to = kT0 + milliseconds(2'500);
  EXPECT_EQ(MostAdmittedBetween(Policy::Window(Algorithm::kFixedWindow, 5, seconds(1)), from, to),
            15);
  EXPECT_EQ(MostAdmittedBetween(Policy::Window(Algorithm::kSlidingLog, 5, seconds(1)), from, to),
            15);
  EXPECT_EQ(MostAdmittedBetween(Policy::Window(Algorithm::kSlidingLog, 5, seconds(1)), from,
                                from + milliseconds(999)),
            5);
  EXPECT_EQ(MostAdmittedBetween(Policy::Bucket(Algorithm::kGcra, 3, milliseconds(100)), from, to),
            23);
}

// `a`, then `b`'s events numbered after it.
History Then(History a, const History& b) {
  for (HistoryEvent e : b) {
    e.id = static_cast<int64_t>(a.size());
    a.push_back(e);
  }
  return a;
}

// Key "u"'s windows of 10s start 3s after the epoch's: [3s, 13s), [13s, 23s), ...
const WindowOffset kThreeSeconds{"3s", [](std::string_view) { return Duration(seconds(3)); }};

TEST(WindowOffset, AKeysAlignedWindowsStartAtItsOffset) {
  // Two in [3s, 13s) and two in [13s, 23s): at the offset, within 2 per window; at the epoch's
  // edges, four in [10s, 20s).
  const History h = At({seconds(11), seconds(12), seconds(13), seconds(14)});
  EXPECT_TRUE(CheckAlignedWindowCap(h, 2, seconds(10), kThreeSeconds).empty());
  EXPECT_EQ(CheckAlignedWindowCap(h, 2, seconds(10)).size(), 1u);
  Policy p = Policy::Window(Algorithm::kFixedWindow, 2, seconds(10));
  p.offset = kThreeSeconds;
  EXPECT_TRUE(CheckPromise(h, p).empty());
  EXPECT_TRUE(CheckPromiseOverIntervals(h, p, seconds(1), true)->empty());
  // Three in [13s, 23s): the window named is the key's own.
  const History over = At({seconds(13), seconds(14), seconds(22)});
  const std::vector<Violation> v = CheckPromise(over, p);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].summary, "3 admitted in window [12:00:13.000, 12:00:23.000), limit 2 per 10s");
  EXPECT_EQ(CheckPromiseOverIntervals(over, p, seconds(1), true)->size(), 1u);
  // The model opens the key's next window at its offset too: a denial at 12s, with two
  // admitted since 3s, is right; one at 13s is false.
  const History denied_at_12 = Then(At({seconds(4), seconds(5)}), At({seconds(12)}, false));
  EXPECT_TRUE(CheckFalseDenials(denied_at_12, p).empty());
  const History denied_at_13 = Then(At({seconds(4), seconds(5)}), At({seconds(13)}, false));
  EXPECT_EQ(CheckFalseDenials(denied_at_13, p).size(), 1u);
  Policy at_epoch = p;
  at_epoch.offset = {};
  EXPECT_EQ(CheckFalseDenials(denied_at_12, at_epoch).size(), 1u) << "[10s, 20s) was empty";
  // A run's summary bound holds whatever the offsets: 2 in each of the three windows of 10s
  // any offset can make [0.5s, 20.5s] touch, or the four [0.5s, 21s] may.
  EXPECT_EQ(MostAdmittedBetween(p, kT0 + milliseconds(500), kT0 + milliseconds(20'500)), 6);
  EXPECT_EQ(MostAdmittedBetween(p, kT0 + milliseconds(500), kT0 + seconds(21)), 8);
  EXPECT_EQ(p.ToString(), "fixed-window 2 per 10s, each key's windows from 3s");
  EXPECT_FALSE(p.Problem().has_value());
  Policy bucket = Policy::Bucket(Algorithm::kGcra, 2, seconds(1));
  bucket.offset = kThreeSeconds;
  EXPECT_EQ(bucket.Problem(),
            "a window offset (3s) shifts aligned windows: fixed-window's and sliding-counter's, "
            "not gcra's");
}

TEST(KeyIds, GroupingByTheSimulatorsKeyIdsIsGroupingByKey) {
  // Three keys, interleaved, each over its cap; ids sparse, in key order.
  History h;
  const std::vector<std::string> keys = {"b", "a", "c"};
  for (int i = 0; i < 12; ++i) {
    HistoryEvent e;
    e.id = i;
    e.key = keys[static_cast<size_t>(i % 3)];
    e.invoke = e.apply = e.complete = kT0 + milliseconds(10 * i);
    e.decision = Decision{true, 0, 0, {}, {}};
    h.push_back(e);
  }
  History with_ids = h;
  for (HistoryEvent& e : with_ids) e.key_id = static_cast<int32_t>(2 * (e.key[0] - 'a') + 1);
  for (const auto& check :
       {+[](const History& x) { return CheckAlignedWindowCap(x, 2, seconds(1)); },
        +[](const History& x) { return CheckAnyWindowCap(x, 2, seconds(1)).violations; },
        +[](const History& x) { return CheckBucketConformance(x, 2, seconds(1)); }}) {
    const std::vector<Violation> a = check(h), b = check(with_ids);
    ASSERT_EQ(a.size(), 3u);
    ASSERT_EQ(b.size(), 3u);
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].key, std::string(1, static_cast<char>('a' + i))) << "in key order";
      EXPECT_EQ(a[i].summary, b[i].summary);
      EXPECT_EQ(a[i].witness.size(), b[i].witness.size());
    }
  }
}

TEST(PromiseInvariant, NamesWhatCheckPromiseReports) {
  const History burst = At({seconds(0), seconds(0), seconds(0)});
  for (const AlgorithmInfo& a : Algorithms()) {
    const Algorithm algorithm = *AlgorithmNamed(a.name);
    const Policy p = a.bucket ? Policy::Bucket(algorithm, 1, seconds(1))
                              : Policy::Window(algorithm, 1, seconds(1));
    const std::vector<Violation> v = CheckPromise(burst, p);
    ASSERT_EQ(v.size(), 1u) << a.name;
    EXPECT_EQ(v[0].invariant, PromiseInvariant(algorithm)) << a.name;
  }
}

}  // namespace
}  // namespace ratelab
