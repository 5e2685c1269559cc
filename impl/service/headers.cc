#include "impl/service/headers.h"

#include <algorithm>
#include <array>

namespace ratelab {

namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// The bytes that stand for themselves in a Structured Fields String: printable ASCII but '"' and
// '\\' (escaped); the rest cannot be held (written as '?').
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int byte = 0x20; byte <= 0x7e; ++byte) plain[byte] = byte != '"' && byte != '\\';
  return plain;
}();

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

void AppendStructuredString(std::string_view text, HeaderValue& out) {
  out.Append('"');
  // Most text stands for itself whole (a rule's id is a UUID): found so without a branch a
  // character, and copied at once.
  bool plain = true;
  for (const char c : text) plain &= kPlain[static_cast<unsigned char>(c)];
  if (plain) {
    out.Append(text);
    out.Append('"');
    return;
  }
  // Else runs of characters that stand for themselves are copied at once.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (kPlain[static_cast<unsigned char>(c)]) continue;
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
}

AnswerHeaders RateLimitHeaders(const Decision& decision, const Policy& policy,
                               std::string_view name, Instant now, AnswerHeaders room) {
  const int64_t remaining = std::max<int64_t>(0, decision.remaining);
  AnswerHeaders out = std::move(room);
  out.clear();
  out.reserve(7);  // room for the caller's Content-Type
  // Each value is written where it is kept (one made apart and moved in was copied whole: a
  // fifth of this function); the list has room for all, so none moves as the next is added.
  const auto add = [&out](HeaderName header) -> HeaderValue& {
    return out.emplace_back(header).value;
  };
  add("X-RateLimit-Limit").Append(decision.limit);
  add("X-RateLimit-Remaining").Append(remaining);
  add("X-RateLimit-Reset").Append(ResetUnixSeconds(decision, now));
  HeaderValue& policy_value = add("RateLimit-Policy");
  AppendStructuredString(name, policy_value);
  const std::string_view id = policy_value.view();  // the name quoted, before what follows it
  HeaderValue& left = add("RateLimit");
  left.Append(id);
  left.Append(";r=");
  left.Append(remaining);
  left.Append(";t=");
  left.Append(SecondsUntil(now, decision.reset));
  policy_value.Append(";q=");
  policy_value.Append(policy.limit);
  policy_value.Append(";w=");
  policy_value.Append(CeilSeconds(policy.ClaimWindow()));
  if (!decision.allowed && decision.retry_after != kNever) {
    add("Retry-After").Append(RetryAfterSeconds(decision.retry_after));
  }
  return out;
}

}  // namespace ratelab
