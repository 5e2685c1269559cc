// Each in-process limiter decides exactly as its reference model: allowed, limit, remaining,
// reset and retry_after, on random sequential traffic that hits window edges.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property-tests/properties.h"

namespace ratelab::proptest {
namespace {

RC_GTEST_PROP(InProcessLimiter, FixedWindowMatchesModel, ()) {
  MatchesReference(Algorithm::kFixedWindow, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, SlidingLogMatchesModel, ()) {
  MatchesReference(Algorithm::kSlidingLog, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, SlidingCounterMatchesModel, ()) {
  MatchesReference(Algorithm::kSlidingCounter, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, TokenBucketMatchesModel, ()) {
  MatchesReference(Algorithm::kTokenBucket, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, GcraMatchesModel, ()) {
  MatchesReference(Algorithm::kGcra, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}

RC_GTEST_PROP(InProcessLimiter, AnchoredWindowMatchesModel, ()) {
  MatchesReference(Algorithm::kAnchoredWindow, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}

RC_GTEST_PROP(InProcessLimiter, SlidingLogClosedMatchesModel, ()) {
  MatchesReference(Algorithm::kSlidingLogClosed, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, SlidingCounterAnchoredMatchesModel, ()) {
  MatchesReference(Algorithm::kSlidingCounterAnchored, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, AnchoredWindowHalfOpenMatchesModel, ()) {
  MatchesReference(Algorithm::kAnchoredWindowHalfOpen, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, SlidingCounterAnchoredFlooredMatchesModel, ()) {
  MatchesReference(Algorithm::kSlidingCounterAnchoredFloored, MakeInProcessSubject,
                   MakeModelSubject, TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, TokenBucketIntervalsMatchesModel, ()) {
  MatchesReference(Algorithm::kTokenBucketIntervals, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(InProcessLimiter, TokenBucketCreditMatchesModel, ()) {
  MatchesReference(Algorithm::kTokenBucketCredit, MakeInProcessSubject, MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}

// A key whose window has passed or whose bucket is full again is dropped (serve does so every
// second); no decision after that may tell. (Of a request that costs more than the limit, which
// is never admitted, the reset a model names can still depend on a state long past: such
// requests are left out.)
RC_GTEST_PROP(InProcessLimiter, DroppingIdleKeysChangesNoDecision, ()) {
  Traffic t = *GenTraffic(*GenAlgorithm());
  std::erase_if(t.calls, [&](const Call& c) { return c.cost > t.policy.limit; });
  const std::unique_ptr<Subject> dropping = MakeDroppingIdleSubject(t.policy);
  const std::unique_ptr<Subject> model = MakeModelSubject(t.policy);
  for (size_t i = 0; i < t.calls.size(); ++i) {
    const Call& c = t.calls[i];
    const Decision got = dropping->Decide(c.key, c.now, c.cost);
    const Decision want = model->Decide(c.key, c.now, c.cost);
    RC_ASSERT(got == want);
  }
}

RC_GTEST_PROP(InProcessLimiter, MatchesModelWhenTimeStepsBack, ()) {
  const Algorithm a = *GenAlgorithm();
  MatchesReference(a, MakeInProcessSubject, MakeModelSubject, TimeOrder::kMayStepBack);
}

// The Lua protocols on MemoryKv decide exactly as the models do, field by field.
RC_GTEST_PROP(KvProtocol, FixedWindowLuaMatchesModel, ()) {
  MatchesReference(Algorithm::kFixedWindow, KvProtocol("kv-fixed-window-lua"), MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}
RC_GTEST_PROP(KvProtocol, GcraLuaMatchesModel, ()) {
  MatchesReference(Algorithm::kGcra, KvProtocol("kv-gcra-lua"), MakeModelSubject,
                   TimeOrder::kNonDecreasing);
}

// Two formulations of one promise: a bucket of tokens and a theoretical arrival time.
RC_GTEST_PROP(ReferenceModel, TokenBucketAndGcraAdmitTheSame, ()) {
  auto as_gcra = [](const Policy& p) {
    Policy g = p;
    g.algorithm = Algorithm::kGcra;
    return MakeModelSubject(g);
  };
  MatchesReference(Algorithm::kTokenBucket, MakeModelSubject, as_gcra, TimeOrder::kNonDecreasing);
}

}  // namespace
}  // namespace ratelab::proptest
