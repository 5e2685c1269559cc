#include "impl/core/text.h"

#include <algorithm>
#include <cstdint>

namespace ratelab {

size_t Utf8SequenceAt(std::string_view s, size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  if (c < 0x80) return 1;
  size_t extra = 0;
  uint32_t code = 0;
  if ((c & 0xe0) == 0xc0) {
    extra = 1, code = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    extra = 2, code = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    extra = 3, code = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() - at <= extra) return 0;  // cut short
  for (size_t k = 1; k <= extra; ++k) {
    const auto next = static_cast<unsigned char>(s[at + k]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  // No overlong forms, no surrogates, nothing past U+10FFFF.
  constexpr uint32_t kLeast[] = {0, 0x80, 0x800, 0x10000};
  if (code < kLeast[extra] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return extra + 1;
}

std::optional<size_t> FirstNonUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

bool IsUtf8Text(std::string_view s) { return s.find('\0') == std::string_view::npos && IsUtf8(s); }

TextPlace PlaceOf(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return {line, column};
}

}  // namespace ratelab
