#include "impl/limiters/kv_fixed_window_lua.h"

#include <algorithm>

namespace ratelab {

const KvScript& KvFixedWindowLua::Script() {
  static const KvScript script("kv-fixed-window-lua", R"lua(-- Fixed window, one key per window.
-- KEYS[1]: the window's key. ARGV: limit, cost, ttl_ms (to the window's end, plus one
-- window, at least kTransitAllowance).
-- Returns {1 admitted / 0 denied, the window's count after the decision}.
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if cost > limit or count + cost > limit then
  return {0, count}
end
count = redis.call('INCRBY', KEYS[1], cost)
if count == cost then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {1, count}
)lua");
  return script;
}

Task<Result<Decision>> KvFixedWindowLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const int64_t index = AlignedWindowIndex(request.now, policy_.window);
  const Instant window_end = AlignedWindowStart(index + 1, policy_.window);
  const int64_t ttl_ms =
      (window_end - request.now + std::max(policy_.window, kTransitAllowance)).count() / 1'000'000 +
      1;
  std::vector<std::string> keys = {"rl:{" + LimiterKey(request) + "}:" + std::to_string(index)};
  std::vector<std::string> args = {std::to_string(policy_.limit), std::to_string(request.cost),
                                   std::to_string(ttl_ms)};
  const Result<std::vector<int64_t>> reply = ReplyIntegers(
      co_await KvEval(ctx, kv_, Script(), std::move(keys), std::move(args)), 2, Script().name);
  if (!reply.ok()) co_return reply.status();
  const int64_t allowed = (*reply)[0], count = (*reply)[1];
  Decision d;
  d.limit = policy_.limit;
  d.allowed = allowed != 0;
  d.remaining = std::max<int64_t>(0, policy_.limit - count);
  d.reset = window_end;
  if (!d.allowed) d.retry_after = request.cost > policy_.limit ? kNever : window_end - request.now;
  co_return d;
}

}  // namespace ratelab
