// A limiter's answer to one request. A denial is a normal Decision, not an error.
#ifndef RATELAB_MODEL_DECISION_H_
#define RATELAB_MODEL_DECISION_H_

#include <cstdint>
#include <string>

#include "model/time.h"

namespace ratelab {

struct Decision {
  bool allowed = false;
  // The policy's N (or burst B), as sent in X-RateLimit-Limit.
  int64_t limit = 0;
  // Whole units the key could still spend right now, after this request.
  int64_t remaining = 0;
  // When the key's full allowance is back if nothing more is admitted.
  Instant reset{};
  // Zero when allowed. When denied: the shortest wait after which the same request, with no
  // other traffic in between, is admitted; kNever when no wait can admit it (cost > limit).
  Duration retry_after{};
  // When allowed: how long the client waits before it forwards the request (a smoothing
  // limiter's delay: admitted now, to go at now + wait); zero for most limiters.
  Duration wait{};
  // Decided by the client without the limiter: the limiter failed (its script erred) and the
  // client admits or denies then, as its library does (fail open, fail closed).
  bool fallback = false;

  bool operator==(const Decision&) const = default;
};

// "allowed remaining=3 reset=00:01:00.000" / "denied retry_after=250ms ...".
std::string ToString(const Decision& d);

}  // namespace ratelab

#endif  // RATELAB_MODEL_DECISION_H_
