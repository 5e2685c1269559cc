// The properties, written once and run against any subject.
//
// Each function draws its own inputs with `*gen` and fails through RC_ASSERT / RC_FAIL, so it
// can run inside RC_GTEST_PROP against the real limiters and inside rc::check against a broken
// mutant, where it must fail (mutation_test.cc). RapidCheck shrinks a failure to the smallest
// traffic that still fails and prints how to replay it (RC_PARAMS="reproduce=...").
#ifndef RATELAB_PROPERTY_TESTS_PROPERTIES_H_
#define RATELAB_PROPERTY_TESTS_PROPERTIES_H_

#include <cstdint>

#include "model/policy.h"
#include "property-tests/subjects.h"
#include "property-tests/traffic_gen.h"

namespace ratelab::proptest {

// Every decision of `make` (decision, remaining, reset, retry_after) equals `reference`'s on the
// same random sequential traffic.
void MatchesReference(Algorithm a, const SubjectFactory& make, const SubjectFactory& reference,
                      TimeOrder order);

// Never more than N admitted in one aligned window (fixed window, sliding counter).
void AlignedWindowNeverAboveLimit(Algorithm a, const SubjectFactory& make);

// What the algorithm itself promises (CheckPromise) holds.
void KeepsItsPromise(Algorithm a, const SubjectFactory& make);

// Never more than `multiple` * N admitted in any span of length W.
void AnyWindowAtMost(Algorithm a, int64_t multiple, const SubjectFactory& make);

// Never more than N admitted in one anchored window (anchored window).
void AnchoredWindowNeverAboveLimit(const SubjectFactory& make);

// N requests one tick before a window edge and N at the edge are all admitted: 2N within two
// ticks. Pins that the fixed window's 2N bound is reached, not just respected.
void BoundaryAttackReachesTwiceTheLimit(const SubjectFactory& make);

// At most B + floor(D / T) admitted in any span of length D (token bucket, GCRA).
void ConformsToBucket(Algorithm a, const SubjectFactory& make);

// After a denial with a finite retry_after R at t, the same request at t + R is admitted and at
// t + R - 1ns is not (each probed on a fresh subject that replayed the same traffic).
void RetryAfterIsExact(Algorithm a, const SubjectFactory& make);

}  // namespace ratelab::proptest

#endif  // RATELAB_PROPERTY_TESTS_PROPERTIES_H_
