// Files ratelab is handed (a scenario, a rules file, a Lua script, an access log, a report), read
// only once they are known to end: a regular file no larger than its kind may be, so that
// /dev/zero, a FIFO or a file of many gigabytes is refused before any memory is spent on it,
// and text checked as UTF-8 with the place of the first byte that is not.
#ifndef RATELAB_IMPL_CORE_INPUT_FILE_H_
#define RATELAB_IMPL_CORE_INPUT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "impl/core/status.h"

namespace ratelab {

struct InputFileKind {
  std::string_view what;  // in an error: "the scenario file", "--lua"
  size_t max_bytes;
  bool text = true;  // must be UTF-8
};

// Scenarios, rules, Lua scripts and their specs, access logs, reports: the most each may hold.
inline constexpr InputFileKind kScenarioFile{"the scenario file", 4 << 20};
inline constexpr InputFileKind kRulesFile{"the rules file", 16 << 20};
inline constexpr InputFileKind kLuaScript{"the Lua script", 1 << 20};
inline constexpr InputFileKind kLuaSpec{"the Lua script's spec", 1 << 20};
inline constexpr InputFileKind kAccessLog{"the access log", 256 << 20, false};
inline constexpr InputFileKind kReportFile{"the report", 256 << 20};
inline constexpr InputFileKind kTokenFile{"the admin token file", 4096};

// "4 MiB", "4096 bytes": a limit as an error states it.
std::string ByteCount(size_t bytes);

// The bytes of `path`. NotFound when it cannot be opened; InvalidArgument, naming the file and
// its kind, when it is not a regular file (a directory, a device, a FIFO), when it holds more
// than kind.max_bytes (saying the limit), or when text is not UTF-8 ("PATH:LINE:COLUMN: ..."). A
// file that grows while it is read is cut at the limit and refused the same way.
Result<std::string> ReadInputFile(const std::string& path, const InputFileKind& kind);

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_INPUT_FILE_H_
