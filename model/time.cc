#include "model/time.h"

#include <cinttypes>
#include <cstdio>

namespace ratelab {

namespace {
constexpr int64_t kNanosPerMilli = 1'000'000;
constexpr int64_t kNanosPerSecond = 1'000'000'000;
constexpr int64_t kNanosPerDay = 86'400 * kNanosPerSecond;
}  // namespace

std::string FormatInstant(Instant t) {
  const int64_t ns = ToUnixNanos(t);
  const int64_t day = FloorDiv(ns, kNanosPerDay);
  const int64_t in_day = ns - day * kNanosPerDay;
  const int64_t secs = in_day / kNanosPerSecond;
  const int64_t sub = in_day % kNanosPerSecond;
  char buf[96];
  std::string out;
  if (day != 0) {
    const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day}}};
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u ", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "%02" PRId64 ":%02" PRId64 ":%02" PRId64 ".%03" PRId64,
                secs / 3600, secs / 60 % 60, secs % 60, sub / kNanosPerMilli);
  out += buf;
  if (sub % kNanosPerMilli != 0) {
    std::snprintf(buf, sizeof buf, "%06" PRId64, sub % kNanosPerMilli);
    out += buf;
  }
  return out;
}

std::string FormatDuration(Duration d) {
  if (d == kNever) return "never";
  const int64_t ns = d.count();
  struct Unit {
    int64_t nanos;
    const char* name;
  };
  constexpr Unit kUnits[] = {{3600 * kNanosPerSecond, "h"},
                             {60 * kNanosPerSecond, "m"},
                             {kNanosPerSecond, "s"},
                             {kNanosPerMilli, "ms"},
                             {1'000, "us"},
                             {1, "ns"}};
  if (ns == 0) return "0s";
  for (const Unit& u : kUnits) {
    if (ns % u.nanos == 0) return std::to_string(ns / u.nanos) + u.name;
    // Up to three decimals of the largest unit that fits, when that is exact: "1.5s".
    const int64_t milli_units = u.nanos / 1000;
    if ((ns >= u.nanos || ns <= -u.nanos) && u.nanos >= 1000 && ns % milli_units == 0) {
      const int64_t whole = ns / u.nanos;
      std::string frac = std::to_string(1000 + (ns < 0 ? -ns : ns) % u.nanos / milli_units);
      frac = frac.substr(1);
      while (frac.back() == '0') frac.pop_back();
      return std::to_string(whole) + "." + frac + u.name;
    }
  }
  return std::to_string(ns) + "ns";
}

}  // namespace ratelab
