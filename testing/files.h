// Files for tests: read one whole, make a fresh directory, write one. Header-only; for tests.
#ifndef RATELAB_TESTING_FILES_H_
#define RATELAB_TESTING_FILES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ratelab::testing_files {

namespace fs = std::filesystem;

inline std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path `name` under the test's temp dir, unique to the running test, with nothing there yet.
inline fs::path TempDir(const std::string& name) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::path(::testing::TempDir()) /
      ("ratelab-" + std::string(test->test_suite_name()) + "-" + test->name() + "-" + name);
  fs::remove_all(dir);
  return dir;
}

// Writes `text` to `dir`/`name` (making `dir`) and returns the path.
inline fs::path Write(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  const fs::path p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

}  // namespace ratelab::testing_files

#endif  // RATELAB_TESTING_FILES_H_
