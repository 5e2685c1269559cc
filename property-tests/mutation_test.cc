// Every property must be able to fail: each is run against a deliberately broken limiter or
// model and must find the break. rc::check prints the shrunk counterexample it finds.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "property-tests/mutants.h"
#include "property-tests/properties.h"

namespace ratelab::proptest {
namespace {

TEST(Mutants, OffByOneFixedWindowBreaksTheAlignedCap) {
  EXPECT_FALSE(rc::check("aligned cap on an off-by-one fixed window", [] {
    AlignedWindowNeverAboveLimit(Algorithm::kFixedWindow, OffByOneLimit);
  }));
}

TEST(Mutants, OffByOneFixedWindowDiffersFromTheModel) {
  EXPECT_FALSE(rc::check("differential on an off-by-one fixed window", [] {
    MatchesReference(Algorithm::kFixedWindow, OffByOneLimit, MakeModelSubject,
                     TimeOrder::kNonDecreasing);
  }));
}

TEST(Mutants, OffByOneModelIsCaughtByTheDifferentialProperty) {
  // The correct limiter against a broken reference: the disagreement shows either way.
  EXPECT_FALSE(rc::check("differential against an off-by-one sliding log model", [] {
    MatchesReference(Algorithm::kSlidingLog, MakeInProcessSubject, OffByOneLimit,
                     TimeOrder::kNonDecreasing);
  }));
}

TEST(Mutants, EarlyExpirySlidingLogBreaksTheAnyWindowCap) {
  EXPECT_FALSE(rc::check("any-window cap on a sliding log expiring a tick early",
                         [] { AnyWindowAtMost(Algorithm::kSlidingLog, 1, EarlyExpiry); }));
}

TEST(Mutants, OffByOneSlidingCounterBreaksTheAlignedCap) {
  EXPECT_FALSE(rc::check("aligned cap on an off-by-one sliding counter", [] {
    AlignedWindowNeverAboveLimit(Algorithm::kSlidingCounter, OffByOneLimit);
  }));
}

TEST(Mutants, OffByOneAnchoredWindowBreaksItsCap) {
  EXPECT_FALSE(rc::check("anchored cap on an off-by-one anchored window",
                         [] { AnchoredWindowNeverAboveLimit(OffByOneLimit); }));
}

TEST(Mutants, FastRefillTokenBucketBreaksConformance) {
  EXPECT_FALSE(rc::check("conformance of a token bucket refilling twice as fast",
                         [] { ConformsToBucket(Algorithm::kTokenBucket, FastRefill); }));
}

TEST(Mutants, OffByOneGcraBreaksConformance) {
  EXPECT_FALSE(rc::check("conformance of an off-by-one GCRA",
                         [] { ConformsToBucket(Algorithm::kGcra, OffByOneLimit); }));
}

TEST(Mutants, EarlyRetryAfterIsCaught) {
  EXPECT_FALSE(rc::check("retry-after exactness when told to retry a tick early",
                         [] { RetryAfterIsExact(Algorithm::kGcra, RetryTooSoon); }));
}

TEST(Mutants, FixedWindowThatNeverBurstsFailsTheBoundaryProperty) {
  // A sliding log is not a fixed window: it refuses the second half of the boundary attack,
  // so the property that pins the 2N burst must fail on it.
  EXPECT_FALSE(rc::check("boundary attack on a sliding log", [] {
    BoundaryAttackReachesTwiceTheLimit([](const Policy& p) {
      Policy log = p;
      log.algorithm = Algorithm::kSlidingLog;
      return MakeInProcessSubject(log);
    });
  }));
}

}  // namespace
}  // namespace ratelab::proptest
