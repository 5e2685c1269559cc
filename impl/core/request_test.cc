#include "impl/core/request.h"

#include <gtest/gtest.h>

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
