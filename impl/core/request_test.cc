#include "impl/core/request.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace ratelab {
namespace {

TEST(LimiterKey, JoinsScopeAndEndpoint) {
  EXPECT_EQ(LimiterKey({"user", "u_42", "/api/search", 1, {}}), "user:u_42:/api/search");
}

TEST(LimiterKey, SeparatorsInsideValuesCannotCollide) {
  // Unescaped, both would be "user:a:b:/x".
  EXPECT_NE(LimiterKey({"user", "a:b", "/x", 1, {}}), LimiterKey({"user", "a", "b:/x", 1, {}}));
  EXPECT_EQ(LimiterKey({"user", "a:b", "/x", 1, {}}), "user:a%3Ab:/x");
}

// Whatever its parts hold, a key is its three parts escaped and joined.
TEST(LimiterKey, IsThePartsEscapedAndJoinedWhetherOrNotAnyNeedsEscaping) {
  const std::string alphabet = std::string("ab/_-09:{}% \x7f\x80") + '\0';
  std::mt19937_64 random(7);
  const auto part = [&](bool plain) {
    std::string p(random() % 20, ' ');
    for (char& c : p) c = alphabet[random() % (plain ? 6 : alphabet.size())];
    return p;
  };
  int escaped = 0;
  for (int i = 0; i < 2000; ++i) {
    const bool plain = random() % 2 == 0;  // half of the keys with nothing to escape
    const std::string a = part(plain), b = part(plain), c = part(plain);
    const std::string want = EscapeKeyPart(a) + ":" + EscapeKeyPart(b) + ":" + EscapeKeyPart(c);
    ASSERT_EQ(LimiterKey(a, b, c), want);
    // Built in place too (up to 64 bytes in the object, longer on the heap), the same key.
    ASSERT_EQ(InPlaceLimiterKey(Request{a, b, c, 1, {}}).view(), want);
    escaped += want.size() != a.size() + b.size() + c.size() + 2 ? 1 : 0;
  }
  EXPECT_GT(escaped, 500);
  EXPECT_LT(escaped, 1500);
}

TEST(InPlaceText, HoldsTextAcrossItsRoomAndCopiesAndMovesWhatItHolds) {
  for (const size_t length : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{40}}) {
    InPlaceText<8> text;
    std::string want;
    for (size_t i = 0; i < length; ++i) {
      const char c = static_cast<char>('a' + i % 26);
      if (i % 3 == 0) {
        text.push_back(c);
        want.push_back(c);
      } else {
        text.append(std::string_view(&c, 1));
        want.append(1, c);
      }
      ASSERT_EQ(text.view(), want) << "after " << i + 1 << " characters";
    }
    EXPECT_EQ(text.size(), want.size());
    EXPECT_EQ(text.empty(), want.empty());
    InPlaceText<8> copy = text;
    EXPECT_EQ(copy.view(), want);
    InPlaceText<8> assigned;
    assigned.append("something else entirely");
    assigned = copy;
    EXPECT_EQ(assigned.view(), want);
    InPlaceText<8> moved = std::move(copy);
    EXPECT_EQ(moved.view(), want);
    moved.append("!", 1);
    EXPECT_EQ(moved.view(), want + "!");
    EXPECT_EQ(text.view(), want) << "a copy is its own";
  }
}

TEST(EscapeKeyPart, RemovesEveryHashTagCharacter) {
  EXPECT_EQ(EscapeKeyPart("{tag}%x y"), "%7Btag%7D%25x%20y");
  EXPECT_EQ(EscapeKeyPart("%7B"), "%257B") << "an escaped-looking value stays distinct";
}

TEST(ValidateRequest, NamesTheBadField) {
  EXPECT_EQ(Validate({"user", "", "/x", 1, {}}).message(), "request: scope_value is empty");
  EXPECT_EQ(Validate({"user", "u", "/x", 0, {}}).message(),
            "request: cost must be at least 1 (got 0)");
  EXPECT_TRUE(Validate({"user", "u", "", 1, {}}).ok()) << "an empty endpoint means any";
}

}  // namespace
}  // namespace ratelab
