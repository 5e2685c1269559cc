// Reading real traffic from an access log, for the `replay` traffic generator.
//
// Two formats:
//   csv     `timestamp,key[,endpoint,cost]` per line; the timestamp in unix seconds (fractions
//           allowed: 1700000000.250) or RFC 3339 (2023-11-14T22:13:20.250Z, or with an offset
//           such as +01:00); an optional header line starting with "timestamp"; blank lines
//           and lines starting with '#' are skipped;
//   common  the common or combined web-server log format
//           (`host ident user [10/Oct/2000:13:55:36 -0700] "GET /path?q HTTP/1.1" 200 2326 ...`):
//           the key is the host, the endpoint the request's path without its query.
// `auto` takes common when the first record looks like it, csv otherwise.
#ifndef RATELAB_SIM_LOG_REPLAY_H_
#define RATELAB_SIM_LOG_REPLAY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "sim/traffic.h"

namespace ratelab {

enum class LogFormat { kAuto, kCsv, kCommon };
std::optional<LogFormat> LogFormatNamed(std::string_view name);

struct AccessLog {
  std::vector<Arrival> arrivals;  // in the log's order
  // The zone the log's times were written in (+01:00 for "[14/Mar/2026:09:00:00 +0100]"), when
  // every record was written in the same one; none for unix seconds or a log in several zones.
  std::optional<Duration> utc_offset;
};

// Parses `text`; errors read "SOURCE:LINE: what is wrong".
Result<AccessLog> ParseAccessLog(std::string_view text, const std::string& source,
                                 LogFormat format);
Result<AccessLog> LoadAccessLog(const std::string& path, LogFormat format);

// Moves every arrival by whole days so that the first one falls in the day after `day` (on
// `day`'s date, or the next when its time of day is earlier), keeping each one's time of day
// and so how it lines up with windows of up to a day.
void ShiftToDayOf(std::vector<Arrival>& arrivals, Instant day);

}  // namespace ratelab

#endif  // RATELAB_SIM_LOG_REPLAY_H_
