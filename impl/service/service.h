// The rate-limit service: one function from an HTTP request to its answer, which `ratelab serve`
// calls for each request it receives and the simulator calls for each simulated one, so that
// what is checked is what is served. Every decision goes rule match -> key -> protocol ->
// decision -> headers through a RulesLimiter (impl/rules/rules_limiter.h); the rules are never
// read from their store on the request path.
//
//   POST /ratelimit/check   seed 003's decision API: {"user_id", "endpoint", "scope"} answered
//                           200 {"allowed": true, "remaining", "limit", "reset"} or
//                           429 {"allowed": false, "remaining": 0, "limit", "retry_after"}
//                           (reset in unix seconds, retry_after in whole seconds, rounded up)
//   POST /api/hit           seed 001's API: {"userId"}, decided on the endpoint /api/hit, answered
//                           200 {userId, minute, count, limit, status: "ok"} or
//                           429 {error: "Rate limit exceeded", limit}
//   GET  /healthz           200 {"status": "ok"}
//
// Every decision's answer carries the rate-limit headers (headers.h) of the rule that answered;
// a request no rule limits is admitted without them. A body that is not what the endpoint takes
// is a 400 naming the field; a store that failed (under the `error` failure policy) a 503; an
// unknown path a 404, a known one with the wrong method a 405 with Allow.
#ifndef RATELAB_IMPL_SERVICE_SERVICE_H_
#define RATELAB_IMPL_SERVICE_SERVICE_H_

#include <array>
#include <string_view>

#include "impl/core/task.h"
#include "impl/rules/rules_limiter.h"
#include "impl/service/http.h"

namespace ratelab {

// The seeds' own policies, for a service given no rules: seed 001's 5 requests a minute per user
// on /api/hit (a fixed window), and seed 003's 100 a minute per user and endpoint elsewhere (a
// token bucket of 100, refilled at 100 a minute).
RuleSet SeedServiceRules();
// Each rule enforced in process, by memory-<its algorithm> (state kept by the limiter itself).
RulesLimiter::ProtocolMaker InProcessProtocols();

class RateLimitService {
 public:
  // Decides with `limiter`, which must outlive the service. Not thread-safe (nor is the
  // limiter): one per simulated node, or one per server thread.
  explicit RateLimitService(RulesLimiter& limiter) : limiter_(limiter) {}

  // The answer to `request`, received at `now` on the node's clock. `request` and `ctx` must
  // outlive the task.
  Task<HttpResponse> Handle(Context& ctx, const HttpRequest& request, Instant now);

 private:
  struct Route {
    std::string_view method;
    std::string_view path;
    Task<HttpResponse> (RateLimitService::*handle)(Context&, const HttpRequest&, Instant);
  };
  // What the service serves, one row an endpoint.
  static const std::array<Route, 3> kRoutes;

  Task<HttpResponse> Check(Context& ctx, const HttpRequest& request, Instant now);
  Task<HttpResponse> Hit(Context& ctx, const HttpRequest& request, Instant now);
  Task<HttpResponse> Health(Context& ctx, const HttpRequest& request, Instant now);

  RulesLimiter& limiter_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_SERVICE_H_
