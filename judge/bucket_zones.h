// The linearizability search for a bucket (token bucket, with or without credit, and GCRA), exact
// without enumerating instants.
//
// Both models are one number: F, the instant the bucket is full again (GCRA's TAT; for a token
// bucket of level L brought up to date at U, U + B*T - L). A request of cost c deciding at t is
// admitted when F - t <= D (D = (B - c)T, or (B - 1)T on credit), and then F becomes
// max(F, t) + cT. Every test is a difference of two instants against a constant, so the instants a
// linearization can give its calls are a zone (difference bounds), not a list: the search places
// calls in an order, each admission either before F (F moves on by cT) or at or after it (F is the
// instant plus cT), and keeps, for each set of calls placed, the zones of F and one more instant
// they can leave: on the store's clock the last call's (the next takes effect no sooner); on the
// client's, for a token bucket, the latest instant it has refilled to (a call that read an earlier
// one decides as at it), and for GCRA none. A zone inside one already tried is not tried again. So
// a bucket opened by a race of many calls, at a nanosecond clock, is decided from the orders alone
// (the search over instants, linearizability.cc, has to try each point a refill can fall on).
#ifndef RATELAB_JUDGE_BUCKET_ZONES_H_
#define RATELAB_JUDGE_BUCKET_ZONES_H_

#include <cstdint>
#include <span>

#include "judge/linearizability.h"
#include "model/policy.h"

namespace ratelab {

// Whether the calls of one key can be judged by zones: a bucket, only admissions and denials
// compared (not Remaining nor the wait), a period that is a whole number of the clock's ticks,
// costs whose refills together span less than nine years, and, on the store's clock, intervals
// whose ends are whole ticks too.
bool BucketZonesApply(const Policy& policy, std::span<const LinearOp> ops,
                      const LinearizabilityOptions& options);

// The calls of one key judged by zones, within `budget` search steps. Requires BucketZonesApply.
KeyLinearizability CheckBucketByZones(const Policy& policy, std::span<const LinearOp> ops,
                                      const LinearizabilityOptions& options, int64_t budget);

}  // namespace ratelab

#endif  // RATELAB_JUDGE_BUCKET_ZONES_H_
