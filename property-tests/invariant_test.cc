// What each algorithm promises, checked by the oracles on the in-process limiters.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property-tests/properties.h"

namespace ratelab::proptest {
namespace {

RC_GTEST_PROP(FixedWindow, NeverAboveLimitInAnAlignedWindow, ()) {
  AlignedWindowNeverAboveLimit(Algorithm::kFixedWindow, MakeInProcessSubject);
}
RC_GTEST_PROP(FixedWindow, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kFixedWindow, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(FixedWindow, BoundaryAttackReachesTwiceTheLimit, ()) {
  BoundaryAttackReachesTwiceTheLimit(MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingLog, NeverAboveLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kSlidingLog, 1, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounter, NeverAboveLimitInAnAlignedWindow, ()) {
  AlignedWindowNeverAboveLimit(Algorithm::kSlidingCounter, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounter, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kSlidingCounter, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(AnchoredWindow, NeverAboveLimitInAWindow, ()) {
  AnchoredWindowNeverAboveLimit(MakeInProcessSubject);
}
RC_GTEST_PROP(AnchoredWindow, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kAnchoredWindow, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingLogClosed, NeverAboveLimitInAnyClosedWindow, ()) {
  KeepsItsPromise(Algorithm::kSlidingLogClosed, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounterAnchored, NeverAboveLimitInAWindowOfItsGrid, ()) {
  KeepsItsPromise(Algorithm::kSlidingCounterAnchored, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounterAnchored, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kSlidingCounterAnchored, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(AnchoredWindowHalfOpen, NeverAboveLimitInAHalfOpenWindow, ()) {
  KeepsItsPromise(Algorithm::kAnchoredWindowHalfOpen, MakeInProcessSubject);
}
RC_GTEST_PROP(AnchoredWindowHalfOpen, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kAnchoredWindowHalfOpen, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounterAnchoredFloored, NeverAboveLimitInAWindowOfItsGrid, ()) {
  KeepsItsPromise(Algorithm::kSlidingCounterAnchoredFloored, MakeInProcessSubject);
}
RC_GTEST_PROP(SlidingCounterAnchoredFloored, NeverAboveTwiceTheLimitInAnyWindow, ()) {
  AnyWindowAtMost(Algorithm::kSlidingCounterAnchoredFloored, 2, MakeInProcessSubject);
}
RC_GTEST_PROP(TokenBucketIntervals, ConformsToBurstPlusRate, ()) {
  ConformsToBucket(Algorithm::kTokenBucketIntervals, MakeInProcessSubject);
}
RC_GTEST_PROP(TokenBucket, ConformsToBurstPlusRate, ()) {
  ConformsToBucket(Algorithm::kTokenBucket, MakeInProcessSubject);
}
RC_GTEST_PROP(TokenBucketCredit, ConformsToBurstPlusRateWithTheLastOnCredit, ()) {
  ConformsToBucket(Algorithm::kTokenBucketCredit, MakeInProcessSubject);
}
RC_GTEST_PROP(Gcra, ConformsToBurstPlusRate, ()) {
  ConformsToBucket(Algorithm::kGcra, MakeInProcessSubject);
}
RC_GTEST_PROP(InProcessLimiter, RetryAfterIsExact, ()) {
  RetryAfterIsExact(*GenAlgorithm(), MakeInProcessSubject);
}
RC_GTEST_PROP(ReferenceModel, RetryAfterIsExact, ()) {
  RetryAfterIsExact(*GenAlgorithm(), MakeModelSubject);
}

}  // namespace
}  // namespace ratelab::proptest
