// Text checks and helpers: UTF-8 found well formed or not, and where; the nearest word, for "did
// you mean ...?".
#include "impl/core/text.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab {
namespace {

// FirstNonUtf8 a sequence at a time, as it was before it skipped ASCII eight bytes at a time.
std::optional<size_t> FirstNonUtf8BySequence(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

TEST(FirstNonUtf8, FindsTheFirstBadByteWhereverItFallsAmongEightByteRuns) {
  // Well formed (2, 3 and 4 bytes) and not (a bad lead byte, a lone continuation, cut short,
  // overlong, a surrogate, past U+10FFFF).
  const std::vector<std::string> pieces = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                           "\xff",     "\x80",         "\xe2\x82",
                                           "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"};
  size_t cases = 0, bad = 0;
  for (size_t before = 0; before <= 20; ++before) {
    for (size_t after = 0; after <= 10; ++after) {
      for (const std::string& piece : pieces) {
        for (const std::string& second : {std::string(), std::string("\xff"), piece}) {
          const std::string s =
              std::string(before, 'a') + piece + std::string(after, 'b') + second + "cdefghij";
          const std::optional<size_t> expected = FirstNonUtf8BySequence(s);
          ASSERT_EQ(FirstNonUtf8(s), expected) << "before " << before << ", after " << after;
          ++cases;
          bad += expected.has_value();
        }
      }
    }
  }
  EXPECT_GT(bad, cases / 3);  // both answers were asked for, many times
  EXPECT_LT(bad, cases);
  EXPECT_EQ(FirstNonUtf8(std::string(40, 'a') + "\xff"), 40u);
  EXPECT_EQ(FirstNonUtf8(std::string(7, 'a') + "\xe2\x82\xac" + std::string(9, 'a')), std::nullopt);
  EXPECT_EQ(FirstNonUtf8(std::string(7, 'a') + "\xe2\x82"), 7u);  // cut short at the end
  EXPECT_EQ(FirstNonUtf8(""), std::nullopt);
}

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
