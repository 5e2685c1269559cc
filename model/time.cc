#include "model/time.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>

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

// `ns` cut down to a multiple of 10^(9 - digits) nanoseconds: `digits` decimals of a second.
int64_t CutToDigits(int64_t ns, int digits) {
  int64_t unit = 1;
  for (int i = digits; i < 9; ++i) unit *= 10;
  return FloorDiv(ns, unit) * unit;
}

std::string FormatInstantTo(Instant t, int digits) {
  std::string out = FormatInstant(FromUnixNanos(CutToDigits(ToUnixNanos(t), digits)));
  // FormatInstant writes 3 decimals, or 9 when the time is not whole milliseconds.
  const size_t point = out.rfind('.');
  if (out.size() > point + 4) out.resize(point + 1 + static_cast<size_t>(digits));
  return out;
}

std::string FormatDurationTo(Duration d, int digits) {
  if (d == kNever) return FormatDuration(d);
  return FormatDuration(Duration(CutToDigits(d.count(), digits)));
}

std::string FormatDuration(Duration d) {
  if (d == kNever) return "never";
  const int64_t ns = d.count();
  if (ns == 0) return "0s";
  const int64_t kHour = 3600 * kNanosPerSecond;
  const int64_t kMinute = 60 * kNanosPerSecond;
  if (ns % kHour == 0) return std::to_string(ns / kHour) + "h";
  if (ns % kMinute == 0) return std::to_string(ns / kMinute) + "m";
  // The largest of s, ms, us that is at most |d|, with every remaining digit: always exact.
  struct Unit {
    int64_t nanos;
    int digits;
    const char* name;
  };
  constexpr Unit kUnits[] = {{kNanosPerSecond, 9, "s"}, {kNanosPerMilli, 6, "ms"}, {1000, 3, "us"}};
  const int64_t magnitude = ns < 0 ? -ns : ns;
  for (const Unit& u : kUnits) {
    if (magnitude < u.nanos) continue;
    std::string frac = std::to_string(u.nanos + magnitude % u.nanos).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    return (ns < 0 ? "-" : "") + std::to_string(magnitude / u.nanos) +
           (frac.empty() ? "" : "." + frac) + u.name;
  }
  return std::to_string(ns) + "ns";
}

std::optional<Duration> ParseDuration(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.empty()) return std::nullopt;
  Int128 total = 0;
  while (!text.empty()) {
    // Number: digits, optionally a point and more digits.
    Int128 whole = 0;
    Int128 frac = 0;
    Int128 frac_scale = 1;
    size_t i = 0;
    bool digits = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, digits = true) {
      whole = whole * 10 + (text[i] - '0');
      if (whole > (Int128{1} << 64)) return std::nullopt;
    }
    if (i < text.size() && text[i] == '.') {
      for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, digits = true) {
        if (frac_scale > 1'000'000'000'000'000'000LL) return std::nullopt;
        frac = frac * 10 + (text[i] - '0');
        frac_scale *= 10;
      }
    }
    if (!digits) return std::nullopt;
    text.remove_prefix(i);
    // Unit: the longest match first.
    struct Unit {
      std::string_view name;
      int64_t nanos;
    };
    constexpr Unit kUnits[] = {{"ms", kNanosPerMilli},
                               {"us", 1000},
                               {"ns", 1},
                               {"h", 3600 * kNanosPerSecond},
                               {"m", 60 * kNanosPerSecond},
                               {"s", kNanosPerSecond}};
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(0, u.name.size()) == u.name) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) return std::nullopt;
    text.remove_prefix(unit->name.size());
    const Int128 frac_nanos = frac * unit->nanos;
    if (frac_nanos % frac_scale != 0) return std::nullopt;  // finer than a nanosecond
    total += whole * unit->nanos + frac_nanos / frac_scale;
    if (total > std::numeric_limits<int64_t>::max()) return std::nullopt;
  }
  return Duration(static_cast<int64_t>(negative ? -total : total));
}

namespace {
// Reads exactly `width` digits of `text` at `at` into `out`, moving `at` past them.
bool Digits(std::string_view text, size_t& at, size_t width, int64_t& out) {
  if (text.size() < at + width) return false;
  out = 0;
  for (size_t i = at; i < at + width; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    out = out * 10 + (text[i] - '0');
  }
  at += width;
  return true;
}
bool Expect(std::string_view text, size_t& at, char c) {
  if (at >= text.size() || text[at] != c) return false;
  ++at;
  return true;
}
// The instant of a UTC date and a time of day (seconds and nanoseconds into it), or empty when
// the date does not exist.
std::optional<Instant> UtcInstant(int64_t year, int64_t month, int64_t day, int64_t seconds,
                                  int64_t nanos) {
  const std::chrono::year_month_day ymd{std::chrono::year{static_cast<int>(year)},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) return std::nullopt;
  const int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
  return FromUnixNanos(days * kNanosPerDay + seconds * kNanosPerSecond + nanos);
}
}  // namespace

std::optional<Instant> ParseInstant(std::string_view text) {
  size_t at = 0;
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, nanos = 0;
  if (!Digits(text, at, 4, year) || !Expect(text, at, '-') || !Digits(text, at, 2, month) ||
      !Expect(text, at, '-') || !Digits(text, at, 2, day)) {
    return std::nullopt;
  }
  if (at < text.size() && (text[at] == 'T' || text[at] == ' ')) {
    ++at;
    if (!Digits(text, at, 2, hour) || !Expect(text, at, ':') || !Digits(text, at, 2, minute)) {
      return std::nullopt;
    }
    if (at < text.size() && text[at] == ':') {
      ++at;
      if (!Digits(text, at, 2, second)) return std::nullopt;
      if (at < text.size() && text[at] == '.') {
        ++at;
        int64_t scale = kNanosPerSecond;
        const size_t first = at;
        for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
          if (scale == 1) return std::nullopt;  // finer than a nanosecond
          scale /= 10;
          nanos += (text[at] - '0') * scale;
        }
        if (at == first) return std::nullopt;
      }
    }
  }
  if (at < text.size() && text[at] == 'Z') ++at;
  if (at != text.size() || year < 1970 || year > 2200 || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  return UtcInstant(year, month, day, hour * 3600 + minute * 60 + second, nanos);
}

namespace {

// Which of the twelve `text` names (January is 1), or 0.
int MonthNamed(std::string_view text) {
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (size_t i = 0; i < std::size(kMonths); ++i) {
    if (kMonths[i] == text) return static_cast<int>(i) + 1;
  }
  return 0;
}

// Whether `text` names a day of the week, short ("Sun") or, when `full`, long ("Sunday").
bool WeekdayNamed(std::string_view text, bool full) {
  static constexpr std::string_view kDays[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                               "Thursday", "Friday", "Saturday"};
  for (std::string_view day : kDays) {
    if (text == (full ? day : day.substr(0, 3))) return true;
  }
  return false;
}

}  // namespace

std::optional<Instant> ParseHttpDate(std::string_view text) {
  int64_t year = 0, day = 0, hour = 0, minute = 0, second = 0;
  int month = 0;
  // "HH:MM:SS" at `at`.
  const auto time_of_day = [&](size_t at) {
    return Digits(text, at, 2, hour) && Expect(text, at, ':') && Digits(text, at, 2, minute) &&
           Expect(text, at, ':') && Digits(text, at, 2, second);
  };
  const size_t comma = text.find(", ");
  if (comma == 3 && text.size() == 29) {  // Sun, 06 Nov 1994 08:49:37 GMT
    size_t at = 5;
    if (!WeekdayNamed(text.substr(0, 3), false) || !Digits(text, at, 2, day) ||
        !Expect(text, at, ' ') || (month = MonthNamed(text.substr(8, 3))) == 0 || text[11] != ' ' ||
        !Digits(text, (at = 12), 4, year) || text[16] != ' ' || !time_of_day(17) ||
        text.substr(25) != " GMT") {
      return std::nullopt;
    }
  } else if (comma != std::string_view::npos && text.size() == comma + 24) {
    // Sunday, 06-Nov-94 08:49:37 GMT
    size_t at = comma + 2;
    int64_t yy = 0;
    if (!WeekdayNamed(text.substr(0, comma), true) || !Digits(text, at, 2, day) ||
        !Expect(text, at, '-') || (month = MonthNamed(text.substr(at, 3))) == 0 ||
        !Expect(text, (at += 3), '-') || !Digits(text, at, 2, yy) || !Expect(text, at, ' ') ||
        !time_of_day(at) || text.substr(at + 8) != " GMT") {
      return std::nullopt;
    }
    year = yy >= 70 ? 1900 + yy : 2000 + yy;
  } else if (comma == std::string_view::npos && text.size() == 24) {  // Sun Nov  6 08:49:37 1994
    size_t at = 8;
    if (!WeekdayNamed(text.substr(0, 3), false) || text[3] != ' ' ||
        (month = MonthNamed(text.substr(4, 3))) == 0 || text[7] != ' ') {
      return std::nullopt;
    }
    if (text[8] == ' ') {
      at = 9;
      if (!Digits(text, at, 1, day)) return std::nullopt;
    } else if (!Digits(text, at, 2, day)) {
      return std::nullopt;
    }
    if (text[10] != ' ' || !time_of_day(11) || text[19] != ' ' ||
        !Digits(text, (at = 20), 4, year)) {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  // Years within what an instant holds (and a header means).
  if (year < 1900 || year > 2200 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  // A leap second (60) is read as the next second's start.
  return UtcInstant(year, month, day, hour * 3600 + minute * 60 + second, 0);
}

std::string FormatUtc(Instant t) {
  const int64_t ns = ToUnixNanos(t);
  const int64_t day = FloorDiv(ns, kNanosPerDay);
  const int64_t in_day = ns - day * kNanosPerDay;
  const int64_t secs = in_day / kNanosPerSecond;
  const std::chrono::year_month_day ymd{std::chrono::sys_days{std::chrono::days{day}}};
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02" PRId64 ":%02" PRId64 ":%02" PRId64,
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), secs / 3600, secs / 60 % 60, secs % 60);
  std::string out = buf;
  if (int64_t sub = in_day % kNanosPerSecond; sub != 0) {
    std::string frac = std::to_string(kNanosPerSecond + sub).substr(1);
    while (frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + "Z";
}

std::string FormatUtcOffset(Duration offset) {
  const int64_t minutes = std::chrono::duration_cast<std::chrono::minutes>(offset).count();
  const int64_t m = minutes < 0 ? -minutes : minutes;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02" PRId64 ":%02" PRId64, minutes < 0 ? '-' : '+', m / 60,
                m % 60);
  return buf;
}

std::optional<Duration> ParseUtcOffset(std::string_view text) {
  if (text.size() != 6 || (text[0] != '+' && text[0] != '-') || text[3] != ':') return std::nullopt;
  const auto digit = [&](size_t i) { return text[i] >= '0' && text[i] <= '9'; };
  if (!digit(1) || !digit(2) || !digit(4) || !digit(5)) return std::nullopt;
  const int hours = (text[1] - '0') * 10 + (text[2] - '0');
  const int minutes = (text[4] - '0') * 10 + (text[5] - '0');
  if (hours > 23 || minutes > 59) return std::nullopt;
  const Duration d = std::chrono::hours(hours) + std::chrono::minutes(minutes);
  return text[0] == '-' ? -d : d;
}

Duration Percentile(std::vector<Duration>& durations, int p) {
  if (durations.empty()) return Duration(0);
  std::sort(durations.begin(), durations.end());
  return durations[(durations.size() - 1) * static_cast<size_t>(p) / 100];
}

}  // namespace ratelab
