// The templates of a user script's KEYS and ARGV: names, arithmetic, literal braces, and a clear
// error for each way a template can be wrong.
#include "impl/limiters/script_template.h"

#include <gtest/gtest.h>

#include "impl/limiters/kv_redis_recipes.h"

namespace ratelab {
namespace {

ScriptTemplate::Value Values(std::string_view name) {
  if (name == "key") return std::string("user:u1:/api");
  if (name == "burst" || name == "limit") return 5.0;
  if (name == "rate_per_s") return 2.0;
  if (name == "now_ms") return 1767225600123.0;
  if (name == "now_s_float") return 1767225600.123456;
  return 7.0;
}

std::string Expand(std::string_view text) {
  Result<ScriptTemplate> t = ScriptTemplate::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->Expand(Values) : "";
}

std::string ErrorOf(std::string_view text) {
  Result<ScriptTemplate> t = ScriptTemplate::Parse(text);
  EXPECT_FALSE(t.ok()) << text;
  return t.ok() ? "" : std::string(t.status().message());
}

TEST(ScriptTemplate, NamesAreWrittenAsJavaScriptWouldWriteThem) {
  EXPECT_EQ(Expand("rl:{key}"), "rl:user:u1:/api");
  EXPECT_EQ(Expand("{now_ms}"), "1767225600123");
  EXPECT_EQ(Expand("{now_s_float}"), "1767225600.123456");
  EXPECT_EQ(Expand("{ limit }"), "5");
  EXPECT_EQ(Expand("plain"), "plain");
}

TEST(ScriptTemplate, ArithmeticOverTheValues) {
  EXPECT_EQ(Expand("{rate_per_s*1000}"), "2000");
  EXPECT_EQ(Expand("{ceil(burst/rate_per_s)+1}"), "4");
  EXPECT_EQ(Expand("{(burst-1)*1000}"), "4000");
  EXPECT_EQ(Expand("{-burst+1}"), "-4");
  EXPECT_EQ(Expand("{min(limit, 3)},{max(1,2,9)}"), "3,9");
  EXPECT_EQ(Expand("{floor(now_s_float)}"), "1767225600");
  EXPECT_EQ(Expand("{burst/rate_per_s}"), "2.5");
  // Written as JavaScript's String(x) writes it: fixed from 1e-6 up to 1e21, else exponential.
  EXPECT_EQ(Expand("{rate_per_s/1000000}"), "0.000002");
  EXPECT_EQ(Expand("{rate_per_s/20000000}"), "1e-7");
  EXPECT_EQ(Expand("{-rate_per_s/1000000}"), "-0.000002");
}

TEST(ScriptTemplate, NumbersAreWrittenAsJavaScriptWritesThem) {
  const std::pair<double, const char*> cases[] = {
      {0, "0"},
      {-0.0, "0"},
      {123.456, "123.456"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1e-6, "0.000001"},
      {1.5e-7, "1.5e-7"},
      {1e21, "1e+21"},
      {1.25e21, "1.25e+21"},
      {123456789012345680000.0, "123456789012345680000"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {-2.5, "-2.5"},
  };
  for (const auto& [x, js] : cases) EXPECT_EQ(JsNumber(x), js) << x;
}

TEST(ScriptTemplate, DoubledBracesAreLiteral) {
  EXPECT_EQ(Expand("rl:{{{key}}}"), "rl:{user:u1:/api}");
  EXPECT_EQ(Expand("{{tag}}:{limit}"), "{tag}:5");
}

TEST(ScriptTemplate, RemembersTheNamesItUses) {
  Result<ScriptTemplate> t = ScriptTemplate::Parse("{key}:{ceil(now_ms/1000)}");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->names(), (std::vector<std::string>{"key", "now_ms"}));
}

TEST(ScriptTemplate, EachMistakeIsNamed) {
  EXPECT_NE(ErrorOf("{windw}").find("unknown placeholder '{windw}' in '{windw}' (expected {key}"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("{limit*}"),
            "bad expression '{limit*}' in '{limit*}': an expression ends too soon");
  EXPECT_EQ(ErrorOf("{key*2}"),
            "bad expression '{key*2}' in '{key*2}': 'key' is text, not a number");
  EXPECT_EQ(ErrorOf("{sqrt(limit)}"),
            "bad expression '{sqrt(limit)}' in '{sqrt(limit)}': unknown function 'sqrt' (expected "
            "ceil, floor, round, abs, min or max)");
  EXPECT_EQ(ErrorOf("{(limit+1}"),
            "bad expression '{(limit+1}' in '{(limit+1}': a '(' is not closed");
  EXPECT_EQ(ErrorOf("{limit"), "unmatched '{' in '{limit'");
  EXPECT_EQ(ErrorOf("limit}"), "unmatched '}' in 'limit}'");
  EXPECT_EQ(ErrorOf("{}"), "an empty {} in '{}'");
  EXPECT_EQ(ErrorOf("{limit 2}"), "bad expression '{limit 2}' in '{limit 2}': unexpected '2'");
  // However deep the nesting a user writes, it is an error, not a crash.
  const std::string deep = "{" + std::string(100000, '(') + "1" + std::string(100000, ')') + "}";
  EXPECT_NE(ErrorOf(deep).find("nested more than 64 deep"), std::string::npos);
  EXPECT_NE(ErrorOf("{" + std::string(100000, '-') + "1}").find("nested more than 64 deep"),
            std::string::npos);
  std::string nots = "{";
  for (int i = 0; i < 100000; ++i) nots += "not ";
  EXPECT_NE(ErrorOf(nots + "1}").find("nested more than 64 deep"), std::string::npos);
}

}  // namespace
}  // namespace ratelab
