// Time vocabulary shared by the models and the implementations.
//
// `Instant` is a point on a clock at nanosecond resolution, counted from the Unix epoch, so a
// virtual clock and the real system clock share one type. `Duration` is a signed nanosecond
// span. APIs take these types, never raw integers. Nothing here reads a clock: time is always
// passed in.
#ifndef RATELAB_MODEL_TIME_H_
#define RATELAB_MODEL_TIME_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab {

using Duration = std::chrono::nanoseconds;
using Instant = std::chrono::sys_time<Duration>;

// "Never": the retry_after of a request that no amount of waiting admits (cost above limit).
inline constexpr Duration kNever = Duration::max();
// Nanoseconds in a millisecond, for what counts in whole milliseconds (Redis, Date.now()).
inline constexpr int64_t kNanosPerMs = 1'000'000;

// Instant from nanoseconds since the Unix epoch, and back.
constexpr Instant FromUnixNanos(int64_t ns) { return Instant(Duration(ns)); }
constexpr int64_t ToUnixNanos(Instant t) { return t.time_since_epoch().count(); }

// Floor division for possibly negative numerators; `d` must be positive.
constexpr int64_t FloorDiv(int64_t n, int64_t d) {
  int64_t q = n / d;
  return (n % d != 0 && n < 0) ? q - 1 : q;
}

// `t` in whole unix milliseconds (JavaScript's Date.now()), and back.
constexpr int64_t UnixMillis(Instant t) { return FloorDiv(ToUnixNanos(t), 1'000'000); }
constexpr Instant FromUnixMillis(int64_t ms) { return FromUnixNanos(ms * 1'000'000); }

// 128-bit intermediate for products such as limit * window in nanoseconds.
__extension__ using Int128 = __int128;

// Index of the aligned window of length `window` holding `t`: windows start at multiples of
// `window` since the epoch, as Math.floor(Date.now() / windowMs) does.
constexpr int64_t AlignedWindowIndex(Instant t, Duration window) {
  return FloorDiv(ToUnixNanos(t), window.count());
}
constexpr Instant AlignedWindowStart(int64_t index, Duration window) {
  return FromUnixNanos(index * window.count());
}

// "12:00:59.400" (UTC time of day; a date is prefixed when it is not 1970-01-01, and sub-ms
// digits appear only when present). For witnesses a reviewer reads.
std::string FormatInstant(Instant t);
// The same, cut to `digits` decimals of a second (3: milliseconds, 6: microseconds), those past
// the milliseconds only when not all zero: for sentences a reader reads, where nanoseconds are
// noise.
std::string FormatInstantTo(Instant t, int digits);
// "1m", "1.5s", "250ms", "3ns"; "never" for kNever.
std::string FormatDuration(Duration d);
// The p-th percentile (0 to 100) of `durations`, which it sorts; zero when there are none.
Duration Percentile(std::vector<Duration>& durations, int p);
// The same, cut down to `digits` decimals of a second (3: "58.908s", not "58.908221949s").
std::string FormatDurationTo(Duration d, int digits);
// Parses what FormatDuration writes, and sums such as "1m30s": each part a number (decimals
// allowed while the result stays whole nanoseconds) and a unit among h, m, s, ms, us, ns; a
// leading '-' negates. Empty on anything else.
std::optional<Duration> ParseDuration(std::string_view text);
// "2026-01-01T00:00:00Z": a UTC date, optionally with a time of day (HH:MM[:SS[.fraction]], after
// 'T' or a space) and a final 'Z', between the years 1970 and 2200. Empty on anything else.
std::optional<Instant> ParseInstant(std::string_view text);
// An HTTP-date (RFC 9110, 5.6.7) in any of its three forms, as a recipient must read them:
// "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate), "Sunday, 06-Nov-94 08:49:37 GMT" (RFC 850; a
// two-digit year from 70 is 19xx, else 20xx) and "Sun Nov  6 08:49:37 1994" (asctime), in the
// years 1900 to 2200. Empty on anything else, a day that does not exist included.
std::optional<Instant> ParseHttpDate(std::string_view text);
// "2026-01-01T00:00:00Z", as ParseInstant reads it (fractions of a second when present).
std::string FormatUtc(Instant t);
// A zone's offset from UTC: "+01:00", "-05:30" (whole minutes, under a day).
std::string FormatUtcOffset(Duration offset);
// Parses what FormatUtcOffset writes (and RFC 3339's offsets): a sign, hours 00 to 23, ':',
// minutes 00 to 59. Empty on anything else.
std::optional<Duration> ParseUtcOffset(std::string_view text);

}  // namespace ratelab

#endif  // RATELAB_MODEL_TIME_H_
