// RapidCheck generators for policies and sequential traffic.
//
// Traffic is built to hit the edges where limiters go wrong: gaps of 0, 1 tick, W - 1, W and
// W + 1, jumps to exactly one tick before, at, and after the next aligned window edge, costs
// above the limit, and (when asked) a `now` that steps backwards. Windows range from a few
// nanoseconds (every edge case within a handful of requests) to a minute.
#ifndef RATELAB_PROPERTY_TESTS_TRAFFIC_GEN_H_
#define RATELAB_PROPERTY_TESTS_TRAFFIC_GEN_H_

#include <rapidcheck.h>

#include <ostream>
#include <string>
#include <vector>

#include "model/history.h"
#include "model/policy.h"
#include "property-tests/subjects.h"

namespace ratelab::proptest {

struct Call {
  std::string key;
  Instant now;
  int64_t cost = 1;
};

struct Traffic {
  Policy policy;
  std::vector<Call> calls;
};

enum class TimeOrder { kNonDecreasing, kMayStepBack };

// Any of the five algorithms.
rc::Gen<Algorithm> GenAlgorithm();
rc::Gen<Policy> GenPolicy(Algorithm a);
// Calls for keys "a", "b", "c"; with kNonDecreasing every call's `now` is >= the previous one.
rc::Gen<std::vector<Call>> GenCalls(const Policy& p, TimeOrder order);
rc::Gen<Traffic> GenTraffic(Algorithm a, TimeOrder order = TimeOrder::kNonDecreasing);

// Runs `calls` through `subject` one after another; every event applies at its `now`.
History RunSequentially(Subject& subject, const std::vector<Call>& calls);

void showValue(const Call& c, std::ostream& os);
void showValue(const Traffic& t, std::ostream& os);

}  // namespace ratelab::proptest

namespace ratelab {
void showValue(const Decision& d, std::ostream& os);
void showValue(const Policy& p, std::ostream& os);
void showValue(Algorithm a, std::ostream& os);
}  // namespace ratelab

#endif  // RATELAB_PROPERTY_TESTS_TRAFFIC_GEN_H_
