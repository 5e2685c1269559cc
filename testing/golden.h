// Golden files for tests: what a command printed or wrote, checked in beside the test, and
// compared byte for byte. On a difference the test fails with the lines that differ (the common
// head and tail left out) and keeps what it got in the temp dir. With RATELAB_UPDATE_GOLDEN=1
// the test writes what it got over the golden file instead, so that a change in behaviour is a
// diff of readable files that the commit's reviewer reads. Header-only; for tests.
#ifndef RATELAB_TESTING_GOLDEN_H_
#define RATELAB_TESTING_GOLDEN_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "testing/files.h"

namespace ratelab::testing_golden {

namespace fs = std::filesystem;

inline std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

// The lines in which `got` differs from `want`: the common head and tail left out (a few kept
// for context), the rest of `want` as "-" lines and of `got` as "+" lines, each side at most
// `most` lines.
inline std::string Difference(std::string_view want, std::string_view got, size_t most = 40) {
  const std::vector<std::string_view> a = Lines(want), b = Lines(got);
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail]) {
    ++tail;
  }
  constexpr size_t kContext = 3;
  std::string out = "@@ line " + std::to_string(head + 1) + " @@\n";
  for (size_t i = head - std::min(head, kContext); i < head; ++i) {
    out.append(" ").append(a[i]).append("\n");
  }
  const auto side = [&](const std::vector<std::string_view>& lines, char mark) {
    const size_t end = lines.size() - tail;
    for (size_t i = head; i < end && i < head + most; ++i) {
      out.append(1, mark).append(lines[i]).append("\n");
    }
    if (end > head + most) {
      out.append(1, mark).append(" ... " + std::to_string(end - head - most) + " more\n");
    }
  };
  side(a, '-');
  side(b, '+');
  for (size_t i = a.size() - tail; i < a.size() && i < a.size() - tail + kContext; ++i) {
    out.append(" ").append(a[i]).append("\n");
  }
  return out;
}

// Expects `got` to be the golden file `path` (relative to the source tree's `root`), or writes
// it there under RATELAB_UPDATE_GOLDEN=1. `what` names it in a failure.
inline void ExpectGolden(const fs::path& root, const std::string& path, const std::string& got,
                         const std::string& what) {
  const fs::path file = root / path;
  const char* update = std::getenv("RATELAB_UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    testing_files::Write(file.parent_path(), file.filename().string(), got);
    return;
  }
  if (!fs::exists(file)) {
    ADD_FAILURE() << what << ": no golden file " << path << " (RATELAB_UPDATE_GOLDEN=1 writes it)";
    return;
  }
  const std::string want = testing_files::Read(file);
  if (want == got) return;
  std::string kept_name = path;
  std::replace(kept_name.begin(), kept_name.end(), '/', '_');
  const fs::path kept =
      testing_files::Write(::testing::TempDir(), "ratelab-golden-" + kept_name, got);
  ADD_FAILURE() << what << " differs from " << path << " (all of it: diff " << file.string() << " "
                << kept.string() << "; RATELAB_UPDATE_GOLDEN=1 takes it):\n"
                << Difference(want, got);
}

}  // namespace ratelab::testing_golden

#endif  // RATELAB_TESTING_GOLDEN_H_
