#include "impl/core/text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

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
    // Eight ASCII bytes at a time (most text from outside is ASCII: paths, headers, names).
    if (s.size() - i >= 8) {
      uint64_t eight;
      std::memcpy(&eight, s.data() + i, 8);
      if ((eight & 0x8080808080808080u) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

bool IsUtf8Text(std::string_view s) { return s.find('\0') == std::string_view::npos && IsUtf8(s); }

namespace {

// Edits from `a` to `b` (optimal string alignment: insertions, removals, replacements and swaps
// of neighbours).
size_t Edits(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t replace = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string_view> NearestWord(std::string_view word,
                                            std::span<const std::string_view> choices) {
  if (word.empty()) return std::nullopt;
  std::optional<std::string_view> nearest;
  size_t best = std::min<size_t>(2, (word.size() - 1) / 2) + 1;  // this many is no match
  for (std::string_view choice : choices) {
    const size_t edits = Edits(word, choice);
    if (edits < best) {
      best = edits;
      nearest = choice;
    }
  }
  return nearest;
}

TextPlace PlaceOf(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return {line, column};
}

}  // namespace ratelab
