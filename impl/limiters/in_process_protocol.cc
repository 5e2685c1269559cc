#include "impl/limiters/in_process_protocol.h"

#include <array>
#include <string>

namespace ratelab {

Task<Result<Decision>> InProcessProtocol::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string key = LimiterKey(request);
  // The key is in the request's history event; the label says what the step does.
  Decision d =
      co_await ctx.Step("decide", [&] { return limiter_->Decide(key, request.now, request.cost); });
  co_return d;
}

namespace {
constexpr std::array<ProtocolInfo, 5> kProtocols = {{
    {"memory-fixed-window", "memory", "best practice", "fixed-window",
     "in-process aligned fixed window; correct per window, 2N across an edge"},
    {"memory-sliding-log", "memory", "best practice", "sliding-log",
     "in-process exact sliding log; never more than N in any W"},
    {"memory-sliding-counter", "memory", "best practice", "sliding-counter",
     "in-process sliding window counter; approximate, counts only admitted requests"},
    {"memory-token-bucket", "memory", "best practice", "token-bucket",
     "in-process token bucket with exact lazy refill"},
    {"memory-gcra", "memory", "best practice", "gcra",
     "in-process GCRA: one timestamp per key, fastest"},
}};
}  // namespace

std::span<const ProtocolInfo> Protocols() { return kProtocols; }

}  // namespace ratelab
