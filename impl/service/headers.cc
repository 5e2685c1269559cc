#include "impl/service/headers.h"

#include <algorithm>

namespace ratelab {

namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

int64_t CeilSeconds(Duration d) {
  if (d.count() <= 0) return 0;
  return (d.count() - 1) / kNanosPerSecond + 1;
}

// Unix seconds of `t`, rounded up.
int64_t CeilUnixSeconds(Instant t) {
  const int64_t nanos = ToUnixNanos(t);
  const int64_t whole = nanos / kNanosPerSecond;
  return whole + (nanos % kNanosPerSecond > 0 ? 1 : 0);
}

}  // namespace

int64_t SecondsUntil(Instant now, Instant t) { return CeilSeconds(t - now); }

int64_t RetryAfterSeconds(Duration wait) { return CeilSeconds(wait); }

int64_t ResetUnixSeconds(const Decision& decision, Instant now) {
  return CeilUnixSeconds(std::max(decision.reset, now));
}

std::string StructuredString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c < 0x20 || c > 0x7e) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::vector<HttpHeader> RateLimitHeaders(const Decision& decision, const Policy& policy,
                                         std::string_view name, Instant now) {
  const std::string id = StructuredString(name);
  const int64_t remaining = std::max<int64_t>(0, decision.remaining);
  std::vector<HttpHeader> out = {
      {"X-RateLimit-Limit", std::to_string(decision.limit)},
      {"X-RateLimit-Remaining", std::to_string(remaining)},
      {"X-RateLimit-Reset", std::to_string(ResetUnixSeconds(decision, now))},
      {"RateLimit-Policy", id + ";q=" + std::to_string(policy.limit) +
                               ";w=" + std::to_string(CeilSeconds(policy.ClaimWindow()))},
      {"RateLimit", id + ";r=" + std::to_string(remaining) +
                        ";t=" + std::to_string(SecondsUntil(now, decision.reset))},
  };
  if (!decision.allowed && decision.retry_after != kNever) {
    out.push_back({"Retry-After", std::to_string(RetryAfterSeconds(decision.retry_after))});
  }
  return out;
}

}  // namespace ratelab
