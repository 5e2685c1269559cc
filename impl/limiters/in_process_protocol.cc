#include "impl/limiters/in_process_protocol.h"

#include <string>

namespace ratelab {

Task<Result<Decision>> InProcessProtocol::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const InPlaceLimiterKey key(request);
  // The key is in the request's history event; the label says what the step does.
  Decision d = co_await ctx.Step(
      "decide", [&] { return limiter_->Decide(key.view(), request.now, request.cost); });
  co_return d;
}

Task<Result<Decision>> InProcessProtocol::Peek(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const InPlaceLimiterKey key(request);
  Decision d = co_await ctx.Step(
      "peek", [&] { return limiter_->Peek(key.view(), request.now, request.cost); });
  co_return d;
}

}  // namespace ratelab
