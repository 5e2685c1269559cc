// The service seen as a protocol, so that the simulator judges what a client of `ratelab serve`
// sees: each request is sent to the limit service's decision API (POST /ratelimit/check) through
// RateLimitService::Handle, the very function `serve` calls, and decided as an HTTP client reads
// the answer: 200 admits and 429 denies; X-RateLimit-Limit and -Remaining, X-RateLimit-Reset
// (unix seconds) and Retry-After (whole seconds) give the rest. A 400 is the request's fault
// (InvalidArgument), a 503 the store's (Unavailable). Every request costs 1: the decision API
// takes no cost.
#ifndef RATELAB_IMPL_SERVICE_SERVICE_PROTOCOL_H_
#define RATELAB_IMPL_SERVICE_SERVICE_PROTOCOL_H_

#include <memory>

#include "impl/limiters/failure_policy.h"
#include "impl/limiters/protocol.h"
#include "impl/rules/rules_limiter.h"
#include "impl/service/service.h"

namespace ratelab {

class ServiceProtocol final : public Protocol {
 public:
  // The service over a RulesLimiter of `rules` and `make`, meeting a failing store with
  // `on_store_failure`.
  ServiceProtocol(RulesLimiter::RulesSource rules, RulesLimiter::ProtocolMaker make,
                  FailurePolicy on_store_failure);

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  // A new process: the limiter's instances and the breaker forgotten.
  void Restart() override;
  void SeedProcess(uint64_t seed) override { limiter_.SeedProcess(seed); }
  StateSize ProcessState() const override { return limiter_.ProcessState(); }

 private:
  RulesLimiter limiter_;
  FailurePolicy on_store_failure_;
  std::unique_ptr<RateLimitService> service_;
};

// The decision an HTTP client reads from an answer of the decision API (see above), or the
// error it stands for; an InternalError when the RateLimit or RateLimit-Policy field breaks its
// grammar or says other than the X-RateLimit headers.
Result<Decision> DecisionFromAnswer(const HttpResponse& answer, Instant now);

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_SERVICE_PROTOCOL_H_
