// Text held in place up to N bytes, and in a string past them: for text made and read once a
// request (a limiter's key, an answer's header value), which a string would allocate for once it
// is longer than the 15 bytes it holds in place. (absl::InlinedVector<char, N>, appended to by
// resize and copy, was measured in its place: 2.2% more instructions in `simulation_benchmark`,
// whose every request builds a key, and 170 more a request of `serve`.)
#ifndef RATELAB_IMPL_CORE_IN_PLACE_TEXT_H_
#define RATELAB_IMPL_CORE_IN_PLACE_TEXT_H_

#include <array>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace ratelab {

template <size_t N>
class InPlaceText {
 public:
  InPlaceText() = default;

  // As a string appends: `n` characters from `p`, or one.
  void append(const char* p, size_t n) {
    if (longer_.empty() && size_ + n <= N) {
      if (n > 0) std::memcpy(chars_.data() + size_, p, n);
      size_ += n;
      return;
    }
    if (longer_.empty()) longer_.assign(chars_.data(), size_);
    longer_.append(p, n);
  }
  void append(std::string_view text) { append(text.data(), text.size()); }
  void push_back(char c) { append(&c, 1); }

  std::string_view view() const {
    return longer_.empty() ? std::string_view(chars_.data(), size_) : std::string_view(longer_);
  }
  size_t size() const { return view().size(); }
  bool empty() const { return view().empty(); }

 private:
  // The text while it fits. All of it is copied with the rest (a copy of a fixed size costs less
  // than one of the size held), so all of it is written from the start.
  std::array<char, N> chars_{};
  size_t size_ = 0;
  std::string longer_;  // the text, once it is longer than N
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_IN_PLACE_TEXT_H_
