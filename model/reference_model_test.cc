#include "model/reference_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "model/sliding_log_model.h"
#include "testing/time.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(FixedWindowModel, AdmitsNPerAlignedWindowAndRetriesAtTheEdge) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kFixedWindow, 5, minutes(1)));
  for (int i = 0; i < 5; ++i) {
    Decision d = m->Decide("u1", kT0 + seconds(10 + i), 1);
    EXPECT_TRUE(d.allowed);
    EXPECT_EQ(d.remaining, 4 - i);
    EXPECT_EQ(d.reset, kT0 + minutes(1));
  }
  Decision denied = m->Decide("u1", kT0 + seconds(30), 1);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.retry_after, seconds(30));
  EXPECT_TRUE(m->Decide("u2", kT0 + seconds(30), 1).allowed) << "keys are independent";
  EXPECT_FALSE(m->Decide("u1", kT0 + minutes(1) - Duration(1), 1).allowed);
  EXPECT_TRUE(m->Decide("u1", kT0 + minutes(1), 1).allowed);
}

TEST(FixedWindowModel, CostAboveTheLimitIsNeverAdmitted) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kFixedWindow, 5, minutes(1)));
  Decision d = m->Decide("u1", kT0, 6);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, kNever);
}

TEST(SlidingLogModel, RetryAfterIsWhenTheOldestEntryLeavesTheWindow) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kSlidingLog, 2, seconds(10)));
  EXPECT_TRUE(m->Decide("k", kT0 + seconds(1), 1).allowed);
  EXPECT_TRUE(m->Decide("k", kT0 + seconds(4), 1).allowed);
  Decision d = m->Decide("k", kT0 + seconds(5), 1);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, seconds(6));  // the entry at 1s expires at 11s
  EXPECT_EQ(d.reset, kT0 + seconds(14));
  EXPECT_FALSE(m->Decide("k", kT0 + seconds(11) - Duration(1), 1).allowed);
  EXPECT_TRUE(m->Decide("k", kT0 + seconds(11), 1).allowed);
}

// A log kept as a sorted set, with time going back: it keeps only the newest N units, and
// answers as a log that keeps every entry does (every entry after now - W counted, later ones
// included); and whatever order the instants come in, no span of W holds more than N units.
TEST(SlidingLogSortedModel, AnswersAsALogOfEveryEntryAndKeepsAtMostNInAnyWindow) {
  std::mt19937_64 rng(55);
  for (int round = 0; round < 300; ++round) {
    const Policy p =
        Policy::Window(round % 2 == 0 ? Algorithm::kSlidingLog : Algorithm::kSlidingLogClosed,
                       std::uniform_int_distribution<int64_t>(1, 4)(rng), Duration(10));
    const Duration reach = SlidingLogReach(p);
    SlidingLogSortedModel log;
    std::vector<std::pair<Instant, int64_t>> every;  // every admission, in time order
    for (int i = 0; i < 40; ++i) {
      const Instant now(Duration(std::uniform_int_distribution<int64_t>(0, 60)(rng)));
      const int64_t cost = std::uniform_int_distribution<int64_t>(1, 3)(rng);
      int64_t used = 0;
      for (const auto& [at, c] : every) used += at > now - reach ? c : 0;
      const Decision d = log.Peek(p, now, cost);
      ASSERT_EQ(d.allowed, cost <= p.limit - used) << "round " << round << ", request " << i;
      ASSERT_EQ(d.remaining, std::max<int64_t>(0, p.limit - used - (d.allowed ? cost : 0)));
      if (!d.allowed && cost <= p.limit) {
        // The earliest instant from which the entries left after now - W leave room.
        int64_t still = used;
        for (const auto& [at, c] : every) {
          if (at <= now - reach) continue;
          still -= c;
          if (still <= p.limit - cost) {
            ASSERT_EQ(d.retry_after, at + reach - now);
            break;
          }
        }
      }
      if (!d.allowed) continue;
      log.Admit(p, now, cost);
      every.insert(std::upper_bound(every.begin(), every.end(), std::pair{now, cost}),
                   std::pair{now, cost});
      int64_t kept = 0;
      for (const auto& e : log.entries) kept += e.second;
      ASSERT_LT(kept - log.entries.front().second, p.limit);  // the newest N units, no more
    }
    for (const auto& [from, unused] : every) {
      int64_t in_span = 0;
      for (const auto& [at, c] : every) in_span += at >= from && at < from + reach ? c : 0;
      ASSERT_LE(in_span, p.limit) << "round " << round;
    }
  }
}

TEST(SlidingCounterModel, WeighsThePreviousWindowByItsOverlap) {
  // The common Redis recipes' example at limit 100: 70 in the previous window, 35 so far, halfway
  // through.
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kSlidingCounter, 100, minutes(1)));
  for (int i = 0; i < 70; ++i) ASSERT_TRUE(m->Decide("u", kT0 + seconds(1), 1).allowed);
  for (int i = 0; i < 35; ++i) {
    ASSERT_TRUE(m->Decide("u", kT0 + minutes(1) + seconds(30), 1).allowed);
  }
  Decision d = m->Decide("u", kT0 + minutes(1) + seconds(30), 1);
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.remaining, 29);  // 100 - (35 + 35 + 1)
  EXPECT_EQ(d.reset, kT0 + minutes(3));
}

TEST(SlidingCounterModel, RetryAfterWaitsForThePreviousWindowToFade) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kSlidingCounter, 4, seconds(10)));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(m->Decide("u", kT0, 1).allowed);
  // Next window, 2.5s in: 4 * 7.5 / 10 = 3 weighted, so one fits; a second must wait until the
  // weight is at most 2: 4 * (10 - e) <= 20, e >= 5s.
  EXPECT_TRUE(m->Decide("u", kT0 + milliseconds(12'500), 1).allowed);
  Decision d = m->Decide("u", kT0 + milliseconds(12'500), 1);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.retry_after, milliseconds(2'500));
}

TEST(TokenBucketModel, RefillsOneTokenPerInterval) {
  // The common Redis recipes' bucket: capacity 100, 10 per second.
  auto m = MakeReferenceModel(Policy::Bucket(Algorithm::kTokenBucket, 100, milliseconds(100)));
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(m->Decide("u", kT0, 1).allowed);
  Decision d = m->Decide("u", kT0 + seconds(10), 100);
  EXPECT_TRUE(d.allowed) << "10 seconds refill the 50 spent";
  EXPECT_EQ(d.remaining, 0);
  Decision denied = m->Decide("u", kT0 + seconds(10) + milliseconds(50), 1);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.retry_after, milliseconds(50));
  EXPECT_EQ(denied.reset, kT0 + seconds(20));
}

TEST(GcraModel, AgreesWithTheTokenBucketOnABurstThenASteadyRate) {
  const Policy bucket = Policy::Bucket(Algorithm::kTokenBucket, 3, seconds(1));
  Policy gcra = bucket;
  gcra.algorithm = Algorithm::kGcra;
  auto tb = MakeReferenceModel(bucket);
  auto g = MakeReferenceModel(gcra);
  for (int ms : {0, 0, 0, 0, 500, 1000, 1000, 2500, 2600, 9000, 9000, 9000, 9000}) {
    const Instant t = kT0 + milliseconds(ms);
    EXPECT_EQ(tb->Decide("k", t, 1), g->Decide("k", t, 1)) << "at +" << ms << "ms";
  }
}

TEST(ReferenceModel, AdmitRecordsOverAdmissionsSoRemainingStaysAtZero) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kFixedWindow, 1, minutes(1)));
  m->Admit("k", kT0, 1);
  m->Admit("k", kT0, 1);
  Decision d = m->Peek("k", kT0, 1);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.remaining, 0);
}

TEST(ReferenceModel, CloneIsIndependent) {
  auto m = MakeReferenceModel(Policy::Window(Algorithm::kSlidingLog, 1, minutes(1)));
  auto copy = m->Clone();
  EXPECT_TRUE(m->Decide("k", kT0, 1).allowed);
  EXPECT_TRUE(copy->Decide("k", kT0, 1).allowed);
  EXPECT_FALSE(m->Decide("k", kT0, 1).allowed);
}

TEST(Policy, ProblemsNameTheFieldAndValue) {
  EXPECT_EQ(*Policy::Window(Algorithm::kFixedWindow, 0, minutes(1)).Problem(),
            "limit must be between 1 and 1099511627776 (got 0)");
  EXPECT_EQ(*Policy::Bucket(Algorithm::kGcra, 5, Duration(0)).Problem(),
            "interval must be positive and under 146 years (got 0s)");
  EXPECT_FALSE(Policy::Bucket(Algorithm::kGcra, 5, seconds(1)).Problem());
  EXPECT_EQ(Policy::Bucket(Algorithm::kGcra, 10, milliseconds(100)).ToString(),
            "gcra burst 10, one per 100ms");
}

// No model's reset or Retry-After is ever further off than Policy::LongestRestore says (and a
// nanosecond: a closed window's reset is the first instant after it), and a sliding counter's
// goes past its window (a probe judges a server's headers by that bound).
TEST(ReferenceModels, NoResetOrWaitIsLongerThanTheLongestRestore) {
  for (const AlgorithmInfo& info : Algorithms()) {
    const Policy policy = info.bucket ? Policy::Bucket(info.id, 4, seconds(1))
                                      : Policy::Window(info.id, 4, seconds(4));
    auto m = MakeReferenceModel(policy);
    Instant now = kT0;
    uint64_t x = 7;
    for (int i = 0; i < 2000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      now += milliseconds((x >> 33) % 1500);
      const Decision d = m->Decide("k", now, 1);
      const Duration longest = policy.LongestRestore() + Duration(1);
      ASSERT_LE(d.reset - now, longest) << info.name << " at " << i;
      if (!d.allowed) {
        ASSERT_LE(d.retry_after, longest) << info.name;
      }
    }
  }
  auto counter = MakeReferenceModel(Policy::Window(Algorithm::kSlidingCounter, 2, seconds(4)));
  counter->Decide("k", kT0 + seconds(5), 1);
  const Decision d = counter->Decide("k", kT0 + seconds(5), 1);
  EXPECT_EQ(d.reset - (kT0 + seconds(5)), seconds(7));  // the end of the window after its own
}

TEST(IntervalOfRate, WholeMicrosecondsWithinTheBoundsAndNothingThatWouldWrap) {
  EXPECT_EQ(IntervalOfRate(1), Duration(seconds(1)));
  EXPECT_EQ(IntervalOfRate(3), Duration(std::chrono::microseconds(333'333)));
  EXPECT_EQ(IntervalOfRate(1e6), Duration(std::chrono::microseconds(1)));
  EXPECT_EQ(IntervalOfRate(1e-6), Duration(seconds(1'000'000)));
  EXPECT_FALSE(IntervalOfRate(0));
  EXPECT_FALSE(IntervalOfRate(-1));
  EXPECT_FALSE(IntervalOfRate(1e6 + 1));
  EXPECT_FALSE(IntervalOfRate(std::nan("")));
  // 1e12 s a token: 1e21 ns would wrap in 64 bits.
  EXPECT_FALSE(IntervalOfRate(1e-12));
}

}  // namespace
}  // namespace ratelab
