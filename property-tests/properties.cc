#include "property-tests/properties.h"

#include <string>

#include "judge/oracles.h"

namespace ratelab::proptest {

namespace {

void AssertNoViolation(const std::vector<Violation>& violations, const Traffic& t) {
  if (!violations.empty()) {
    RC_FAIL(t.policy.ToString() + " broken:\n" + violations.front().ToString());
  }
}

History Run(const SubjectFactory& make, const Traffic& t) {
  std::unique_ptr<Subject> subject = make(t.policy);
  return RunSequentially(*subject, t.calls);
}

}  // namespace

void MatchesReference(Algorithm a, const SubjectFactory& make, const SubjectFactory& reference,
                      TimeOrder order) {
  const Traffic t = *GenTraffic(a, order);
  std::unique_ptr<Subject> subject = make(t.policy);
  std::unique_ptr<Subject> expected = reference(t.policy);
  for (size_t i = 0; i < t.calls.size(); ++i) {
    const Call& c = t.calls[i];
    const Decision got = subject->Decide(c.key, c.now, c.cost);
    const Decision want = expected->Decide(c.key, c.now, c.cost);
    if (got != want) {
      RC_FAIL("call " + std::to_string(i) + " (key " + c.key + " at " +
              std::to_string(ToUnixNanos(c.now)) + "ns, cost " + std::to_string(c.cost) +
              "): got " + ToString(got) + "; reference says " + ToString(want));
    }
  }
}

void AlignedWindowNeverAboveLimit(Algorithm a, const SubjectFactory& make) {
  const Traffic t = *GenTraffic(a);
  AssertNoViolation(CheckAlignedWindowCap(Run(make, t), t.policy.limit, t.policy.window), t);
}

void AnchoredWindowNeverAboveLimit(const SubjectFactory& make) {
  const Traffic t = *GenTraffic(Algorithm::kAnchoredWindow);
  AssertNoViolation(CheckAnchoredWindowCap(Run(make, t), t.policy.limit, t.policy.window), t);
}

void KeepsItsPromise(Algorithm a, const SubjectFactory& make) {
  const Traffic t = *GenTraffic(a);
  AssertNoViolation(CheckPromise(Run(make, t), t.policy), t);
}

void AnyWindowAtMost(Algorithm a, int64_t multiple, const SubjectFactory& make) {
  const Traffic t = *GenTraffic(a);
  const AnyWindowReport r =
      CheckAnyWindowCap(Run(make, t), multiple * t.policy.limit, t.policy.window);
  RC_TAG(r.max_in_any_window > t.policy.limit ? "above N in some window" : "at most N");
  AssertNoViolation(r.violations, t);
}

void BoundaryAttackReachesTwiceTheLimit(const SubjectFactory& make) {
  Policy p = *GenPolicy(Algorithm::kFixedWindow);
  RC_PRE(p.window.count() >= 2);  // one tick before the edge and the edge share a span of W
  const int64_t edge = *rc::gen::inRange<int64_t>(-5, 5) * p.window.count();
  Traffic t{p, {}};
  for (int64_t i = 0; i < p.limit; ++i) t.calls.push_back({"a", FromUnixNanos(edge - 1), 1});
  for (int64_t i = 0; i < p.limit; ++i) t.calls.push_back({"a", FromUnixNanos(edge), 1});
  const History h = Run(make, t);
  AssertNoViolation(CheckAlignedWindowCap(h, p.limit, p.window), t);
  RC_ASSERT(CheckAnyWindowCap(h, p.limit, p.window).max_in_any_window == 2 * p.limit);
}

void ConformsToBucket(Algorithm a, const SubjectFactory& make) {
  const Traffic t = *GenTraffic(a);
  AssertNoViolation(
      CheckBucketConformance(Run(make, t), t.policy.limit, t.policy.window, CreditOf(t.policy)), t);
}

void RetryAfterIsExact(Algorithm a, const SubjectFactory& make) {
  Traffic t = *GenTraffic(a);
  // End with a burst on one key so that some request is denied.
  const Instant end = t.calls.empty() ? FromUnixNanos(0) : t.calls.back().now;
  for (int64_t i = 0; i <= t.policy.limit; ++i) t.calls.push_back({"a", end, 1});

  std::unique_ptr<Subject> subject = make(t.policy);
  size_t denied = t.calls.size();
  Duration wait{};
  for (size_t i = 0; i < t.calls.size(); ++i) {
    const Decision d = subject->Decide(t.calls[i].key, t.calls[i].now, t.calls[i].cost);
    if (!d.allowed && d.retry_after != kNever) {
      denied = i;
      wait = d.retry_after;
      break;
    }
  }
  RC_ASSERT(denied < t.calls.size());
  const Call& c = t.calls[denied];
  auto probe = [&](Duration after) {
    std::unique_ptr<Subject> replay = make(t.policy);
    for (size_t i = 0; i <= denied; ++i) {
      replay->Decide(t.calls[i].key, t.calls[i].now, t.calls[i].cost);
    }
    return replay->Decide(c.key, c.now + after, c.cost);
  };
  const Decision at = probe(wait);
  if (!at.allowed) {
    RC_FAIL("call " + std::to_string(denied) + " denied with retry after " + FormatDuration(wait) +
            ", but the retry then was denied too: " + ToString(at));
  }
  if (wait > Duration(0)) {
    const Decision early = probe(wait - Duration(1));
    if (early.allowed) {
      RC_FAIL("call " + std::to_string(denied) + " denied with retry after " +
              FormatDuration(wait) + ", but a retry one tick earlier was admitted");
    }
  }
}

}  // namespace ratelab::proptest
