#include "impl/limiters/kv_fixed_window_lua.h"

#include <algorithm>

#include "absl/strings/numbers.h"

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

KvFixedWindowLua::Window KvFixedWindowLua::WindowOf(const Request& request) const {
  const int64_t index = AlignedWindowIndex(request.now, policy_.window);
  return Window{index, "rl:{" + LimiterKey(request) + "}:" + std::to_string(index),
                AlignedWindowStart(index + 1, policy_.window)};
}

Decision KvFixedWindowLua::Decided(const Request& request, const Window& w, bool allowed,
                                   int64_t count) const {
  Decision d;
  d.limit = policy_.limit;
  d.allowed = allowed;
  d.remaining = std::max<int64_t>(0, policy_.limit - count);
  d.reset = w.end;
  if (!d.allowed) d.retry_after = request.cost > policy_.limit ? kNever : w.end - request.now;
  return d;
}

Task<Result<Decision>> KvFixedWindowLua::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const Window w = WindowOf(request);
  const int64_t ttl_ms =
      (w.end - request.now + std::max(policy_.window, kTransitAllowance)).count() / 1'000'000 + 1;
  std::vector<std::string> argv = EvalArgv(Script(), 1, 3);
  argv.push_back(w.key);  // KEYS[1]; ARGV:
  for (const int64_t n : {policy_.limit, request.cost, ttl_ms}) argv.push_back(std::to_string(n));
  const Result<ReplyNumbers> reply =
      ReplyIntegers(co_await KvEval(ctx, kv_, Script(), std::move(argv)), 2, Script().name);
  if (!reply.ok()) co_return reply.status();
  const bool allowed = (*reply)[0] != 0;
  if (allowed && wait_for_replica_) {
    std::vector<std::string> wait = {"WAIT", "1", std::to_string(kWaitTimeout.count() / 1'000'000)};
    const Result<KvReply> acked = co_await KvCommand(ctx, kv_, std::move(wait));
    if (!acked.ok()) co_return acked.status();
    if (acked->type != KvReply::Type::kInteger || acked->integer < 1) {
      co_return absl::UnavailableError(
          "kv-fixed-window-lua-wait: no replica acknowledged the "
          "admission within " +
          FormatDuration(kWaitTimeout) + " (WAIT 1 answered " + ToString(*acked) + ")");
    }
  }
  co_return Decided(request, w, allowed, (*reply)[1]);
}

Task<Result<Decision>> KvFixedWindowLua::Peek(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const Window w = WindowOf(request);
  std::vector<std::string> get = {"GET", w.key};
  const Result<KvReply> reply = co_await KvCommand(ctx, kv_, std::move(get));
  if (!reply.ok()) co_return reply.status();
  int64_t count = 0;
  if (!reply->is_nil() &&
      (reply->type != KvReply::Type::kBulk || !absl::SimpleAtoi(reply->text, &count))) {
    co_return absl::InternalError(std::string(Script().name) + ": the window's key " + w.key +
                                  " holds " + ToString(*reply) + ", not a count");
  }
  const bool allowed = request.cost <= policy_.limit && count + request.cost <= policy_.limit;
  co_return Decided(request, w, allowed, count);
}

}  // namespace ratelab
