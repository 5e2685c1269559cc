#include "impl/limiters/kv_redis_recipes.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "impl/limiters/kv_steps.h"

namespace ratelab {

namespace {

// Date.now(): whole milliseconds on the node's clock.
int64_t DateNow(const Request& r) { return UnixMillis(r.now); }
int64_t WindowMs(const Policy& p) { return p.window.count() / kNanosPerMs; }

// A Redis integer reply, or Internal naming the command (an error reply makes the JavaScript
// client throw: the request fails).
Result<int64_t> IntegerReply(const Result<KvReply>& reply, const char* command) {
  if (!reply.ok()) return reply.status();
  if (reply->type != KvReply::Type::kInteger) {
    return absl::InternalError(std::string(command) + " answered " + ToString(*reply));
  }
  return reply->integer;
}

// checkLimit's Retry-After: the seconds left in the aligned window, rounded up.
Duration SecondsToWindowEnd(int64_t now_ms, int64_t window_ms) {
  const int64_t ms = window_ms - ((now_ms % window_ms) + window_ms) % window_ms;
  return std::chrono::seconds((ms + 999) / 1000);
}

Decision Window(const Policy& p, bool allowed, int64_t remaining, int64_t now_ms, Instant now) {
  Decision d;
  d.allowed = allowed;
  d.limit = p.limit;
  d.remaining = std::max<int64_t>(0, remaining);
  const int64_t w = WindowMs(p);
  d.reset = now + SecondsToWindowEnd(now_ms, w);
  if (!allowed) d.retry_after = SecondsToWindowEnd(now_ms, w);
  return d;
}

std::string Key(const char* prefix, const Request& r) {
  return std::string(prefix) + "{" + LimiterKey(r) + "}";
}

// parseFloat of a hash field, or `fallback` when the field is missing (data?.f ?? fallback).
double FieldOr(const KvReply& hash, const std::string& field, double fallback) {
  for (size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    if (hash.elements[i].text == field) {
      const std::string& v = hash.elements[i + 1].text;
      double x = 0;
      const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      return ec == std::errc() ? x : std::nan("");
    }
  }
  return fallback;
}

// A command's words (a braced list cannot be a coroutine's argument with GCC 12).
template <typename... Words>
std::vector<std::string> Command(Words... words) {
  return {std::string(words)...};
}

}  // namespace

std::string JsNumber(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x == 0) return "0";
  if (x < 0) return "-" + JsNumber(-x);
  // ECMAScript's Number::toString: the shortest digits that read back the same (d1 d2 ... dk,
  // the value being 0.d1...dk times 10^n), laid out by where the point falls.
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(end - buf));  // "1.2345e+02"
  const size_t e = sci.find('e');
  std::string digits(sci.substr(0, e));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int n = std::stoi(std::string(sci.substr(e + 1))) + 1;
  const int k = static_cast<int>(digits.size());
  if (k <= n && n <= 21) return digits + std::string(static_cast<size_t>(n - k), '0');
  if (0 < n && n <= 21) return digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  const std::string exponent = (n - 1 < 0 ? "e-" : "e+") + std::to_string(std::abs(n - 1));
  return digits.substr(0, 1) + (k == 1 ? "" : "." + digits.substr(1)) + exponent;
}

// async function isAllowed(userId, windowSizeMs, maxRequests) {
Task<Result<Decision>> KvFixedWindowIncrPexpire::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const int64_t now_ms = DateNow(request), window_ms = WindowMs(policy_);
  // const windowStart = Math.floor(Date.now() / windowSizeMs) * windowSizeMs;
  const int64_t window_start = FloorDiv(now_ms, window_ms) * window_ms;
  const std::string key = Key("rate:", request) + ":" + std::to_string(window_start);
  // const count = await redis.incr(key);
  const Result<int64_t> count =
      IntegerReply(co_await KvCommand(ctx, kv_, Command("INCR", key)), "INCR");
  if (!count.ok()) co_return count.status();
  // if (count === 1) await redis.pexpire(key, windowSizeMs * 2);
  if (*count == 1) {
    const Result<KvReply> expire =
        co_await KvCommand(ctx, kv_, Command("PEXPIRE", key, std::to_string(window_ms * 2)));
    if (!expire.ok()) co_return expire.status();
  }
  // return count <= maxRequests;
  co_return Window(policy_, *count <= policy_.limit, policy_.limit - *count, now_ms, request.now);
}

double KvSlidingLogZset::MathRandom() {
  uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// async function isAllowed(userId, windowMs, maxRequests) {
Task<Result<Decision>> KvSlidingLogZset::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const int64_t now_ms = DateNow(request), window_ms = WindowMs(policy_);
  const int64_t window_start = now_ms - window_ms;
  const std::string key = Key("rate:log:", request);
  const std::string member = std::to_string(now_ms) + "-" + JsNumber(MathRandom());
  // pipeline.zremrangebyscore(key, 0, windowStart); zadd(key, now, `${now}-${Math.random()}`);
  // zcard(key); expire(key, windowMs / 1000); const results = await pipeline.exec();
  const Result<KvReply> trimmed = co_await KvCommand(
      ctx, kv_, Command("ZREMRANGEBYSCORE", key, "0", std::to_string(window_start)));
  if (!trimmed.ok()) co_return trimmed.status();
  const Result<KvReply> added =
      co_await KvCommand(ctx, kv_, Command("ZADD", key, std::to_string(now_ms), member));
  if (!added.ok()) co_return added.status();
  const Result<int64_t> count =
      IntegerReply(co_await KvCommand(ctx, kv_, Command("ZCARD", key)), "ZCARD");
  if (!count.ok()) co_return count.status();
  // An error reply here (a window of 1500 ms makes "1.5") is in results[3]; nobody reads it.
  const Result<KvReply> expire = co_await KvCommand(
      ctx, kv_, Command("EXPIRE", key, JsNumber(static_cast<double>(window_ms) / 1000)));
  if (!expire.ok()) co_return expire.status();
  // return requestCount <= maxRequests;
  co_return Window(policy_, *count <= policy_.limit, policy_.limit - *count, now_ms, request.now);
}

// async function isAllowed(userId, windowMs, maxRequests) {
Task<Result<Decision>> KvSlidingCounter::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const int64_t now_ms = DateNow(request), window_ms = WindowMs(policy_);
  const int64_t window_start = FloorDiv(now_ms, window_ms) * window_ms;
  const int64_t previous_start = window_start - window_ms;
  const double elapsed_fraction =
      static_cast<double>(now_ms - window_start) / static_cast<double>(window_ms);
  const std::string base = Key("rate:", request) + ":";
  const std::string current = base + std::to_string(window_start);
  // const [prevCount, currCount] = await Promise.all([redis.get(prev), redis.incr(curr)]);
  const Result<KvReply> previous =
      co_await KvCommand(ctx, kv_, Command("GET", base + std::to_string(previous_start)));
  if (!previous.ok()) co_return previous.status();
  const Result<int64_t> count =
      IntegerReply(co_await KvCommand(ctx, kv_, Command("INCR", current)), "INCR");
  if (!count.ok()) co_return count.status();
  // if (currCount === 1) await redis.pexpire(curr, windowMs * 2);
  if (*count == 1) {
    const Result<KvReply> expire =
        co_await KvCommand(ctx, kv_, Command("PEXPIRE", current, std::to_string(window_ms * 2)));
    if (!expire.ok()) co_return expire.status();
  }
  // const rollingCount = (prevCount || 0) * (1 - elapsedFraction) + currCount;
  double previous_count = 0;
  if (previous->type == KvReply::Type::kBulk) {
    std::from_chars(previous->text.data(), previous->text.data() + previous->text.size(),
                    previous_count);
  }
  const double rolling = previous_count * (1 - elapsed_fraction) + static_cast<double>(*count);
  // return rollingCount <= maxRequests;
  const bool allowed = rolling <= static_cast<double>(policy_.limit);
  co_return Window(policy_, allowed,
                   static_cast<int64_t>(std::floor(static_cast<double>(policy_.limit) - rolling)),
                   now_ms, request.now);
}

// async function isAllowed(userId, capacity, refillRate) {
Task<Result<Decision>> KvTokenBucketHgetallHset::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const double capacity = static_cast<double>(policy_.limit);
  const double refill_rate = 1e9 / static_cast<double>(policy_.window.count());  // per second
  const std::string key = Key("token_bucket:", request);
  // const now = Date.now() / 1000;
  const double now = static_cast<double>(DateNow(request)) / 1000;
  // const data = await redis.hgetall(key);
  const Result<KvReply> data = co_await KvCommand(ctx, kv_, Command("HGETALL", key));
  if (!data.ok()) co_return data.status();
  if (data->type != KvReply::Type::kArray) {
    co_return absl::InternalError("HGETALL answered " + ToString(*data));
  }
  // let tokens = parseFloat(data?.tokens ?? capacity);
  // const lastRefill = parseFloat(data?.lastRefill ?? now);
  double tokens = FieldOr(*data, "tokens", capacity);
  const double last_refill = FieldOr(*data, "lastRefill", now);
  // tokens = Math.min(capacity, tokens + (now - lastRefill) * refillRate);
  tokens = std::min(capacity, tokens + (now - last_refill) * refill_rate);
  Decision d;
  d.limit = policy_.limit;
  if (tokens < 1) {
    // const retryAfter = (1 - tokens) / refillRate; return { allowed: false, retryAfter };
    d.allowed = false;
    d.retry_after = Duration(static_cast<int64_t>(std::ceil((1 - tokens) / refill_rate * 1e9)));
    d.reset = request.now + d.retry_after;
    co_return d;
  }
  tokens -= 1;
  // await redis.hset(key, { tokens, lastRefill: now });
  const Result<KvReply> written = co_await KvCommand(
      ctx, kv_, Command("HSET", key, "tokens", JsNumber(tokens), "lastRefill", JsNumber(now)));
  if (!written.ok()) co_return written.status();
  // await redis.expire(key, Math.ceil(capacity / refillRate) + 60);
  const Result<KvReply> expire = co_await KvCommand(
      ctx, kv_, Command("EXPIRE", key, JsNumber(std::ceil(capacity / refill_rate) + 60)));
  if (!expire.ok()) co_return expire.status();
  d.allowed = true;
  d.remaining = static_cast<int64_t>(std::floor(tokens));
  d.reset = request.now;
  co_return d;
}

}  // namespace ratelab
