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

HeaderValue StructuredString(std::string_view text) {
  HeaderValue out;
  out.Append('"');
  // Runs of characters that stand for themselves are copied at once.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '"' && c != '\\' && c >= 0x20 && c <= 0x7e) continue;
    out.Append(text.substr(run, i - run));
    if (c == '"' || c == '\\') {
      out.Append('\\');
      out.Append(c);
    } else {
      out.Append('?');
    }
    run = i + 1;
  }
  out.Append(text.substr(run));
  out.Append('"');
  return out;
}

AnswerHeaders RateLimitHeaders(const Decision& decision, const Policy& policy,
                               std::string_view name, Instant now, AnswerHeaders room) {
  const HeaderValue id = StructuredString(name);
  const int64_t remaining = std::max<int64_t>(0, decision.remaining);
  AnswerHeaders out = std::move(room);
  out.clear();
  out.reserve(7);  // room for the caller's Content-Type
  out.push_back({"X-RateLimit-Limit", HeaderValue::Cat(decision.limit)});
  out.push_back({"X-RateLimit-Remaining", HeaderValue::Cat(remaining)});
  out.push_back({"X-RateLimit-Reset", HeaderValue::Cat(ResetUnixSeconds(decision, now))});
  out.push_back({"RateLimit-Policy", HeaderValue::Cat(id, ";q=", policy.limit,
                                                      ";w=", CeilSeconds(policy.ClaimWindow()))});
  out.push_back({"RateLimit",
                 HeaderValue::Cat(id, ";r=", remaining, ";t=", SecondsUntil(now, decision.reset))});
  if (!decision.allowed && decision.retry_after != kNever) {
    out.push_back({"Retry-After", HeaderValue::Cat(RetryAfterSeconds(decision.retry_after))});
  }
  return out;
}

}  // namespace ratelab
