#include "sim/log_replay.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

#include "impl/core/input_file.h"
#include "impl/core/text.h"

namespace ratelab {
namespace {

using std::chrono::days;

std::vector<std::string_view> Split(std::string_view s, char by) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t next = s.find(by, at);
    out.push_back(s.substr(at, next == std::string_view::npos ? next : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

std::string_view Strip(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> Digits(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

// Timestamps are read from 1970 up to the end of 2199, well inside what an Instant holds.
constexpr int64_t kFirstYear = 1970, kLastYear = 2199;
constexpr int64_t kLastUnixSecond = 7'258'118'399;  // 2199-12-31T23:59:59Z

Instant CivilTime(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s) {
  const std::chrono::sys_days day = std::chrono::year_month_day(
      std::chrono::year(static_cast<int>(y)), std::chrono::month(static_cast<unsigned>(mo)),
      std::chrono::day(static_cast<unsigned>(d)));
  return Instant(day) + std::chrono::hours(h) + std::chrono::minutes(mi) + std::chrono::seconds(s);
}

bool ValidCivil(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s) {
  return y >= kFirstYear && y <= kLastYear && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h <= 23 &&
         mi <= 59 && s <= 60;
}

// A time read from a log, and the zone it was written in (none for unix seconds).
struct Stamp {
  Instant at;
  std::optional<Duration> utc_offset;
};

// "1700000000.250" (unix seconds) or "2023-11-14T22:13:20.250Z" / "...+01:00".
std::optional<Stamp> ParseTimestamp(std::string_view s) {
  if (s.find('T') == std::string_view::npos) {
    const size_t dot = s.find('.');
    const std::optional<int64_t> whole = Digits(s.substr(0, dot));
    if (!whole || *whole > kLastUnixSecond) return std::nullopt;
    int64_t nanos = 0;
    if (dot != std::string_view::npos) {
      const std::string_view frac = s.substr(dot + 1);
      if (frac.size() > 9 || !Digits(frac)) return std::nullopt;
      nanos = *Digits(frac);
      for (size_t i = frac.size(); i < 9; ++i) nanos *= 10;
    }
    return Stamp{FromUnixNanos(0) + std::chrono::seconds(*whole) + Duration(nanos), std::nullopt};
  }
  // YYYY-MM-DDTHH:MM:SS[.fff][Z|+hh:mm|-hh:mm]
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  const auto y = Digits(s.substr(0, 4)), mo = Digits(s.substr(5, 2)), d = Digits(s.substr(8, 2)),
             h = Digits(s.substr(11, 2)), mi = Digits(s.substr(14, 2)),
             sec = Digits(s.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !sec || !ValidCivil(*y, *mo, *d, *h, *mi, *sec)) {
    return std::nullopt;
  }
  Instant t = CivilTime(*y, *mo, *d, *h, *mi, *sec);
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    size_t n = 1;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    const std::string_view frac = rest.substr(1, n - 1);
    if (frac.empty() || frac.size() > 9) return std::nullopt;
    int64_t nanos = *Digits(frac);
    for (size_t i = frac.size(); i < 9; ++i) nanos *= 10;
    t += Duration(nanos);
    rest = rest.substr(n);
  }
  if (rest == "Z") return Stamp{t, Duration::zero()};
  const std::optional<Duration> offset = ParseUtcOffset(rest);  // +hh:mm, hh at most 23
  if (!offset) return std::nullopt;
  return Stamp{t - *offset, *offset};
}

// "10/Oct/2000:13:55:36 -0700"
std::optional<Stamp> ParseCommonDate(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (s.size() != 26 || s[2] != '/' || s[6] != '/' || s[11] != ':' || s[14] != ':' ||
      s[17] != ':' || s[20] != ' ' || (s[21] != '+' && s[21] != '-')) {
    return std::nullopt;
  }
  const auto month = std::find(kMonths.begin(), kMonths.end(), s.substr(3, 3));
  const auto d = Digits(s.substr(0, 2)), y = Digits(s.substr(7, 4)), h = Digits(s.substr(12, 2)),
             mi = Digits(s.substr(15, 2)), sec = Digits(s.substr(18, 2)),
             oh = Digits(s.substr(22, 2)), om = Digits(s.substr(24, 2));
  if (month == kMonths.end() || !d || !y || !h || !mi || !sec || !oh || !om || *oh > 23 ||
      *om > 59) {
    return std::nullopt;
  }
  const int64_t mo = month - kMonths.begin() + 1;
  if (!ValidCivil(*y, mo, *d, *h, *mi, *sec)) return std::nullopt;
  const Duration offset =
      (s[21] == '+' ? 1 : -1) * (std::chrono::hours(*oh) + std::chrono::minutes(*om));
  return Stamp{CivilTime(*y, mo, *d, *h, *mi, *sec) - offset, offset};
}

// A record of a log: the arrival, and the zone its time was written in.
struct Record {
  Arrival arrival;
  std::optional<Duration> utc_offset;
};

// What is wrong with `line` as a record of `format`, or the arrival it holds.
Result<Record> ParseCsvRecord(std::string_view line) {
  const std::vector<std::string_view> f = Split(line, ',');
  if (f.size() != 2 && f.size() != 4) {
    return absl::InvalidArgumentError(
        "expected timestamp,key or timestamp,key,endpoint,cost (got " + std::to_string(f.size()) +
        " fields)");
  }
  const std::string_view ts = Strip(f[0]);
  const std::optional<Stamp> at = ParseTimestamp(ts);
  if (!at) {
    return absl::InvalidArgumentError(
        "bad timestamp '" + std::string(ts) +
        "' (expected unix seconds such as 1700000000.250, or RFC 3339 such as "
        "2023-11-14T22:13:20Z, from 1970 to 2199)");
  }
  Arrival a{at->at, std::string(Strip(f[1]))};
  if (a.user.empty()) return absl::InvalidArgumentError("empty key");
  if (f.size() == 4) {
    a.endpoint = std::string(Strip(f[2]));
    const std::string_view cost = Strip(f[3]);
    const std::optional<int64_t> parsed = Digits(cost);
    if (!parsed || *parsed < 1) {
      return absl::InvalidArgumentError("bad cost '" + std::string(cost) +
                                        "' (expected a whole number of at least 1)");
    }
    a.cost = *parsed;
    if (a.endpoint.empty()) return absl::InvalidArgumentError("empty endpoint");
  }
  return Record{std::move(a), at->utc_offset};
}

Result<Record> ParseCommonRecord(std::string_view line) {
  const size_t open = line.find(" [");
  const size_t close = line.find("] \"", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return absl::InvalidArgumentError(
        "not in common log format (expected host ident user [date] \"request\" status bytes)");
  }
  const std::string_view host = line.substr(0, line.find(' '));
  const std::string_view date = line.substr(open + 2, close - open - 2);
  const std::optional<Stamp> at = ParseCommonDate(date);
  if (!at) {
    return absl::InvalidArgumentError("bad date '" + std::string(date) +
                                      "' (expected 10/Oct/2000:13:55:36 -0700, from 1970 to 2199)");
  }
  const size_t request_start = close + 3;
  const size_t request_end = line.find('"', request_start);
  if (request_end == std::string_view::npos) {
    return absl::InvalidArgumentError("unterminated request (a '\"' is missing)");
  }
  const std::vector<std::string_view> words =
      Split(line.substr(request_start, request_end - request_start), ' ');
  Arrival a{at->at, std::string(host)};
  a.endpoint = "/";
  if (words.size() >= 2) a.endpoint = std::string(words[1].substr(0, words[1].find('?')));
  return Record{std::move(a), at->utc_offset};
}

bool LooksCommon(std::string_view line) { return ParseCommonRecord(line).ok(); }

}  // namespace

std::optional<LogFormat> LogFormatNamed(std::string_view name) {
  if (name == "auto") return LogFormat::kAuto;
  if (name == "csv") return LogFormat::kCsv;
  if (name == "common" || name == "combined") return LogFormat::kCommon;
  return std::nullopt;
}

Result<AccessLog> ParseAccessLog(std::string_view text, const std::string& source,
                                 LogFormat format) {
  AccessLog out;
  bool zones = false;  // whether the records name more than one zone
  int64_t line_no = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = Strip(line);
    if (line.empty() || line[0] == '#') continue;
    if (format == LogFormat::kAuto)
      format = LooksCommon(line) ? LogFormat::kCommon : LogFormat::kCsv;
    if (format == LogFormat::kCsv && out.arrivals.empty() && line.rfind("timestamp", 0) == 0) {
      continue;
    }
    Result<Record> r = format == LogFormat::kCsv ? ParseCsvRecord(line) : ParseCommonRecord(line);
    // A log may hold any bytes (a user agent in Latin-1); what becomes a key or an endpoint is
    // text, as every report writes it.
    if (r.ok() && !IsUtf8Text(r->arrival.user)) {
      r = absl::InvalidArgumentError("the key is not UTF-8 text");
    } else if (r.ok() && !IsUtf8Text(r->arrival.endpoint)) {
      r = absl::InvalidArgumentError("the endpoint is not UTF-8 text");
    }
    if (!r.ok()) {
      return absl::InvalidArgumentError(source + ":" + std::to_string(line_no) + ": " +
                                        std::string(r.status().message()));
    }
    if (out.arrivals.empty()) {
      out.utc_offset = r->utc_offset;
    } else if (out.utc_offset != r->utc_offset) {
      zones = true;
    }
    out.arrivals.push_back(std::move(r->arrival));
  }
  if (out.arrivals.empty()) {
    return absl::InvalidArgumentError(source + ": the log holds no requests");
  }
  if (zones) out.utc_offset.reset();
  return out;
}

Result<AccessLog> LoadAccessLog(const std::string& path, LogFormat format) {
  Result<std::string> text = ReadInputFile(path, kAccessLog);
  if (!text.ok()) return text.status();
  return ParseAccessLog(*text, path, format);
}

void ShiftToDayOf(std::vector<Arrival>& arrivals, Instant day) {
  if (arrivals.empty()) return;
  const Instant first =
      std::min_element(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) {
        return a.at < b.at;
      })->at;
  const auto day_of = [](Instant t) { return std::chrono::floor<days>(t); };
  Duration shift = day_of(day) - day_of(first);
  if (first + shift < day) shift += days(1);  // never before `day`
  for (Arrival& a : arrivals) a.at += shift;
}

}  // namespace ratelab
