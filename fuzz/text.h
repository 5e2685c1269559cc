// Splitting a fuzzer's input into its parts.
#ifndef RATELAB_FUZZ_TEXT_H_
#define RATELAB_FUZZ_TEXT_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace ratelab::fuzz {

// The parts of `text` between the `separator`s, at most `parts` of them (the last holds the
// rest), always `parts` when `pad` (missing ones empty).
inline std::vector<std::string_view> Split(std::string_view text, char separator,
                                           size_t parts = static_cast<size_t>(-1),
                                           bool pad = false) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t at = text.find(separator);
    if (at == std::string_view::npos) break;
    out.push_back(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  out.push_back(text);
  if (pad && out.size() < parts) out.resize(parts);
  return out;
}

}  // namespace ratelab::fuzz

#endif  // RATELAB_FUZZ_TEXT_H_
