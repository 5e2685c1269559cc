#include "impl/limiters/kv_gcra_lua.h"

#include <algorithm>

namespace ratelab {

const KvScript& KvGcraLua::Script() {
  static const KvScript script("kv-gcra-lua", R"lua(-- GCRA, in whole microseconds.
-- KEYS[1]: the limiter key. ARGV: now_us, interval_us, burst, cost, pad_ms (the key lives
-- that long past its theoretical arrival time).
-- Returns {1 admitted / 0 denied, the theoretical arrival time after the decision}.
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local pad = tonumber(ARGV[5])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + cost * interval
if cost > burst or new_tat - now > burst * interval then
  return {0, tat}
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil((new_tat - now) / 1000) + pad)
return {1, new_tat}
)lua");
  return script;
}

KvGcraLua::KvGcraLua(Kv& kv, const Policy& policy)
    : KvProtocol(kv, policy),
      pad_ms_(std::max(kTransitAllowance, policy.limit * policy.window).count() / 1'000'000 + 1) {}

Task<Result<Decision>> KvGcraLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const int64_t now_us = FloorDiv(ToUnixNanos(request.now), 1000);
  const int64_t interval_us = policy_.window.count() / 1000;
  std::vector<std::string> argv = EvalArgv(Script(), 1, 5);
  argv.push_back("rl:{" + LimiterKey(request) + "}");  // KEYS[1]; ARGV:
  for (const int64_t n : {now_us, interval_us, policy_.limit, request.cost, pad_ms_}) {
    argv.push_back(std::to_string(n));
  }
  const Result<ReplyNumbers> reply =
      ReplyIntegers(co_await KvEval(ctx, kv_, Script(), std::move(argv)), 2, Script().name);
  if (!reply.ok()) co_return reply.status();
  const int64_t allowed = (*reply)[0], tat_us = (*reply)[1];
  // The model's arithmetic, in the script's microseconds.
  const int64_t tolerance_us = policy_.limit * interval_us;
  Decision d;
  d.limit = policy_.limit;
  d.allowed = allowed != 0;
  const int64_t room = tolerance_us - (tat_us - now_us);
  d.remaining = room <= 0 ? 0 : room / interval_us;
  d.reset = FromUnixNanos(tat_us * 1000);
  if (!d.allowed) {
    d.retry_after =
        request.cost > policy_.limit
            ? kNever
            : Duration((tat_us + request.cost * interval_us - now_us - tolerance_us) * 1000);
  }
  co_return d;
}

}  // namespace ratelab
