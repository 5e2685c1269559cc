// Text checks and helpers: the nearest word, for "did you mean ...?".
#include "impl/core/text.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace ratelab {
namespace {

TEST(NearestWord, IsTheChoiceFewEditsAway) {
  const std::vector<std::string_view> flags = {"--store", "--seeds", "--seed", "--faults"};
  EXPECT_EQ(NearestWord("--sotre", flags), "--store");  // two neighbours swapped
  EXPECT_EQ(NearestWord("--stor", flags), "--store");
  EXPECT_EQ(NearestWord("--seedz", flags), "--seeds");  // the first of the nearest
  EXPECT_EQ(NearestWord("--falts", flags), "--faults");
  EXPECT_EQ(NearestWord("--zzz", flags), std::nullopt);
  EXPECT_EQ(NearestWord("", flags), std::nullopt);
  // A short word is matched only by one nearer than half its length.
  const std::vector<std::string_view> short_words = {"ab", "xy"};
  EXPECT_EQ(NearestWord("ac", short_words), std::nullopt);
  EXPECT_EQ(NearestWord("abc", short_words), "ab");
}

}  // namespace
}  // namespace ratelab
