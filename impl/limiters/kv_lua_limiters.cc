#include "impl/limiters/kv_lua_limiters.h"

#include <algorithm>

#include "impl/limiters/kv_redis_recipes.h"

namespace ratelab {

namespace {}  // namespace

const KvScript& KvTokenBucketLua::Script() {
  static const KvScript script("kv-token-bucket-lua",
                               R"lua(-- Token bucket, its refill in floating point.
-- KEYS[1]: the bucket, a hash {tokens, last_refill}. ARGV: max_tokens, refill_rate (tokens per
-- ms), now (ms), ttl (ms). Returns {1 allowed / 0 denied, whole tokens left, ms to next token}.
local max_tokens = tonumber(ARGV[1])
local refill_rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
-- 1. Read the hash fields tokens and last_refill from the bucket key.
local state = redis.call('HMGET', KEYS[1], 'tokens', 'last_refill')
local tokens = tonumber(state[1]) or max_tokens
local last_refill = tonumber(state[2]) or now
-- 2. Calculate elapsed time since last refill.
local elapsed = now - last_refill
-- 3. Refill tokens proportionally.
tokens = math.min(max_tokens, tokens + elapsed * refill_rate)
-- 4. If a token is whole, take it; otherwise say when the next one arrives.
local allowed, retry_ms = 0, 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry_ms = math.ceil((1 - tokens) / refill_rate)
end
-- 5. Write tokens and last_refill back; TTL twice the window.
redis.call('HSET', KEYS[1], 'tokens', tokens, 'last_refill', now)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {allowed, math.floor(tokens), retry_ms}
)lua");
  return script;
}

Task<Result<Decision>> KvTokenBucketLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const double interval_ms = static_cast<double>(policy_.window.count()) / kNanosPerMs;
  // The window: how long an empty bucket takes to fill.
  const int64_t ttl_ms =
      2 * ((policy_.limit * policy_.window.count() + kNanosPerMs - 1) / kNanosPerMs);
  std::vector<std::string> argv = EvalArgv(Script(), 1, 4);
  argv.push_back("rl:{" + LimiterKey(request) + "}");  // KEYS[1]; ARGV:
  argv.push_back(std::to_string(policy_.limit));
  argv.push_back(JsNumber(1 / interval_ms));
  argv.push_back(std::to_string(UnixMillis(request.now)));
  argv.push_back(std::to_string(ttl_ms));
  const Result<ReplyNumbers> reply =
      ReplyIntegers(co_await KvEval(ctx, kv_, Script(), std::move(argv)), 3, Script().name);
  if (!reply.ok()) co_return reply.status();
  Decision d = ScriptDecision(*reply, policy_.limit);
  d.reset = request.now + d.retry_after;
  co_return d;
}

const KvScript& KvSlidingLogLua::Script() {
  static const KvScript script("kv-sliding-log-lua", R"lua(-- Exact sliding log.
-- KEYS[1]: the log (a sorted set of admitted requests by time), KEYS[2]: a counter that makes
-- members unique. ARGV: limit, cost, now (ms), window (ms), ttl (ms: the window plus a pad, so
-- that a request delayed in transit still finds the log).
-- Returns {1 admitted / 0 denied, remaining, ms until the request would fit}.
local limit = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
-- The window is (now - window, now]. Requests reach the store out of order (a later one can
-- overtake an earlier one in transit), so entries are trimmed only once they are older than
-- the TTL, and every entry after now - window counts, later ones included.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ttl)
local count = redis.call('ZCOUNT', KEYS[1], '(' .. (now - window), '+inf')
if cost > limit then
  return {0, limit - count, -1}
end
if count + cost > limit then
  -- The request fits once the (count + cost - limit)-th oldest entry has left.
  local rank = redis.call('ZCOUNT', KEYS[1], '-inf', now - window) + count + cost - limit - 1
  local oldest = redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')
  return {0, limit - count, tonumber(oldest[2]) + window - now}
end
for i = 1, cost do
  local seq = redis.call('INCR', KEYS[2])
  redis.call('ZADD', KEYS[1], now, now .. '-' .. seq)
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {1, limit - count - cost, 0}
)lua");
  return script;
}

Task<Result<Decision>> KvSlidingLogLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string tag = "rl:{" + LimiterKey(request) + "}";
  const int64_t ttl_ms =
      (policy_.window + std::max(policy_.window, kTransitAllowance)).count() / kNanosPerMs;
  std::vector<std::string> argv = EvalArgv(Script(), 2, 5);
  argv.push_back(tag + ":log");  // KEYS[1], KEYS[2]; ARGV:
  argv.push_back(tag + ":seq");
  for (const int64_t n : {policy_.limit, request.cost, UnixMillis(request.now),
                          policy_.window.count() / kNanosPerMs, ttl_ms}) {
    argv.push_back(std::to_string(n));
  }
  const Result<ReplyNumbers> reply =
      ReplyIntegers(co_await KvEval(ctx, kv_, Script(), std::move(argv)), 3, Script().name);
  if (!reply.ok()) co_return reply.status();
  Decision d = ScriptDecision(*reply, policy_.limit);
  d.reset = d.allowed || d.retry_after == kNever ? request.now + policy_.window
                                                 : request.now + d.retry_after;
  co_return d;
}

}  // namespace ratelab
