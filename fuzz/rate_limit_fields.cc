// The IETF rate-limit header fields as a client reads them back (impl/service/
// structured_fields.h): the input is a field value, read as a Structured Fields List, as
// RateLimit-Policy and as RateLimit. What either field accepts is a List whose members are named
// by Strings, each with its required Integer parameter. Read as an HTTP-date too (Retry-After,
// Date): what is read is an instant of its years, 1900 to 2200, on a whole second.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "impl/service/structured_fields.h"
#include "model/time.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto list = ratelab::ParseSfList(text);
  if (!list.ok() && list.status().message().empty()) __builtin_trap();
  const auto policy = ratelab::ParseRateLimitPolicy(text);
  if (policy.ok()) {
    if (!list.ok() || list->size() != policy->size()) __builtin_trap();
    for (const auto& p : *policy) {
      if (p.quota < 0 || (p.window && *p.window < 1)) __builtin_trap();
    }
  }
  const auto now = ratelab::ParseRateLimit(text);
  if (now.ok()) {
    if (!list.ok() || list->size() != now->size()) __builtin_trap();
    for (const auto& r : *now) {
      if (r.remaining < 0 || (r.reset && *r.reset < 0)) __builtin_trap();
    }
  }
  if (const auto date = ratelab::ParseHttpDate(text)) {
    const int64_t ns = ratelab::ToUnixNanos(*date);
    constexpr int64_t kSecond = 1'000'000'000;
    if (ns % kSecond != 0 || ns < -2'208'988'800 * kSecond || ns > 7'289'654'400 * kSecond) {
      __builtin_trap();
    }
  }
  return 0;
}
