// Access logs (sim/log_replay.h), in each format: the first byte picks auto, CSV or common (and
// combined), the rest is the log. Arrivals read are in time order and can be moved to a day.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/log_replay.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr ratelab::LogFormat kFormats[] = {ratelab::LogFormat::kAuto, ratelab::LogFormat::kCsv,
                                             ratelab::LogFormat::kCommon};
  const ratelab::LogFormat format = kFormats[data[0] % 3];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  ratelab::Result<ratelab::AccessLog> log = ratelab::ParseAccessLog(text, "fuzz.log", format);
  if (!log.ok()) {
    if (log.status().message().empty()) __builtin_trap();
    return 0;
  }
  ratelab::ShiftToDayOf(log->arrivals, ratelab::FromUnixNanos(1'767'225'600'000'000'000));
  return 0;
}
