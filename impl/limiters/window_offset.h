// A window offset (Policy::offset) as its user writes it: a template over the key and the policy
// that gives a duration, e.g. "{key_crc32 % window_ms}ms" (each key's windows start at its own
// point of the window, as a library that spreads its keys' resets computes it) or "250ms" (every
// key's windows 250ms after the epoch's).
#ifndef RATELAB_IMPL_LIMITERS_WINDOW_OFFSET_H_
#define RATELAB_IMPL_LIMITERS_WINDOW_OFFSET_H_

#include <cstdint>
#include <string_view>

#include "impl/core/status.h"
#include "model/policy.h"

namespace ratelab {

// The CRC-32 of `key` (IEEE 802.3: zlib's crc32, Python's zlib.crc32, Go's crc32.ChecksumIEEE,
// PHP's crc32), the template name {key_crc32}.
uint32_t KeyCrc32(std::string_view key);

// `text` as `policy`'s window offset: a template (impl/limiters/script_template.h) whose names are
// the key's and the policy's (key_crc32, limit, burst, window_ms, window_s, rate_per_s,
// period_s), that gives a duration with its unit. The offset of a key is taken modulo the window
// (an offset of a whole window more shifts nothing). InvalidArgument naming what is wrong: a
// name of the request (its time, its cost), text that gives no duration, or a policy whose
// windows are not aligned.
Result<WindowOffset> ParseWindowOffset(std::string_view text, const Policy& policy);

// `policy` with the offset `text` gives it; `policy` as it is when `text` is empty.
Result<Policy> WithWindowOffset(Policy policy, std::string_view text);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_WINDOW_OFFSET_H_
