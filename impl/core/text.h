// Text from outside (a request's path, a header, a file) checked before it reaches anything that
// assumes UTF-8: a JSON writer, PostgreSQL's text, YAML written back.
#ifndef RATELAB_IMPL_CORE_TEXT_H_
#define RATELAB_IMPL_CORE_TEXT_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ratelab {

// The length of the well-formed UTF-8 sequence (one character) that starts at `s[at]`, or 0 when
// none does there. Requires at < s.size().
size_t Utf8SequenceAt(std::string_view s, size_t at);

// The offset of the first byte of `s` that does not start a well-formed UTF-8 sequence (RFC
// 3629: no overlong forms, no surrogates, nothing past U+10FFFF, nothing cut short), or nothing
// when all of `s` is UTF-8.
std::optional<size_t> FirstNonUtf8(std::string_view s);
inline bool IsUtf8(std::string_view s) { return !FirstNonUtf8(s).has_value(); }
// UTF-8 without NUL bytes: what PostgreSQL's text holds and YAML writes back as it was read.
bool IsUtf8Text(std::string_view s);

// Where byte `offset` of `text` is, for an error that locates it in a file: its line and column,
// both from 1 (a column counts bytes).
struct TextPlace {
  size_t line;
  size_t column;
};
TextPlace PlaceOf(std::string_view text, size_t offset);

// The one of `choices` nearest `word` by edits (a character inserted, removed or replaced, or two
// neighbours swapped), for "did you mean ...?": the first nearest, when it is at most 2 edits
// away and fewer than half of `word`'s length; else nothing.
std::optional<std::string_view> NearestWord(std::string_view word,
                                            std::span<const std::string_view> choices);

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_TEXT_H_
