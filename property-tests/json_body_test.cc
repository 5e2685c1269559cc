// JsonBodyReader reads a body with simdjson and falls back to nlohmann's parser on what simdjson
// refuses; it must answer exactly as nlohmann's parser alone would (ReadByNlohmann), on JSON and
// on what is almost JSON, from a server's padded buffer and from a bare string alike.
#include "impl/service/json_body.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "impl/service/http.h"

namespace ratelab {
namespace {

constexpr std::string_view kShape = R"({"user_id": ...})";

// How two answers differ (the members, or the error), or "" when they are the same.
std::string Difference(const Result<TopLevelMembers>& got, const Result<TopLevelMembers>& want) {
  if (got.ok() != want.ok() || (!got.ok() && got.status() != want.status())) {
    return "read as " + got.status().ToString() + ", not " + want.status().ToString();
  }
  if (got.ok() && got->members() != want->members()) return "read other members";
  return "";
}

// How reading `text` with simdjson, unpadded and padded as a server holds it, differs from
// reading it with nlohmann alone, or "".
std::string Disagreement(JsonBodyReader& reader, const std::string& text) {
  const Result<TopLevelMembers> want = JsonBodyReader::ReadByNlohmann(text, kShape);
  std::string bare(text);
  bare.shrink_to_fit();
  std::string padded;
  padded.reserve(text.size() + kHttpBodyPadding);
  padded.assign(text);
  for (const std::string* body : {&bare, &padded}) {
    if (std::string d = Difference(reader.Read(*body, kShape), want); !d.empty()) return d;
  }
  return "";
}

// Pieces of JSON and of what is almost JSON, joined at random.
rc::Gen<std::string> AlmostJson() {
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(rc::gen::element<std::string>(
                          "{", "}", "[", "]", ",", ":", " ", "\"user_id\"", "\"endpoint\"", "\"u\"",
                          "\"\"", "\"a\\\"b\"", "\"\\u00e9\"", "\"\\ud800\"", "\"\\ud83d\\ude00\"",
                          "\"\xc3\xa9\"", "\"\xff\"", "\"\x01\"", "1", "-0", "1.5", "1e3", "1e400",
                          "123456789012345678901234567890", "true", "false", "null", "tru", "nul",
                          "\xef\xbb\xbf", "/*x*/", "\n", "'u'")),
                      [](const std::vector<std::string>& parts) {
                        std::string out;
                        for (const std::string& p : parts) out += p;
                        return out;
                      });
}

// A well-formed object of members drawn from a few names and values, some repeated.
rc::Gen<std::string> ObjectBody() {
  const auto member = rc::gen::apply(
      [](const std::string& name, const std::string& value) { return name + ":" + value; },
      rc::gen::element<std::string>("\"user_id\"", "\"endpoint\"", "\"scope\"", "\"x\""),
      rc::gen::element<std::string>("\"u_42\"", "\"\"", "\"/api/x\"", "1", "2.5", "true", "null",
                                    "[1,{\"user_id\":\"inner\"}]", "{\"user_id\":\"inner\"}",
                                    "\"caf\\u00e9\""));
  return rc::gen::map(rc::gen::container<std::vector<std::string>>(member),
                      [](const std::vector<std::string>& members) {
                        std::string out = "{";
                        for (size_t i = 0; i < members.size(); ++i) {
                          out += (i > 0 ? "," : "") + members[i];
                        }
                        return out + "}";
                      });
}

RC_GTEST_PROP(JsonBody, SimdjsonAndItsFallbackAnswerAsNlohmannAloneOnAlmostJson, ()) {
  JsonBodyReader reader;
  const std::string body = *AlmostJson();
  RC_ASSERT(Disagreement(reader, body) == "");
}

RC_GTEST_PROP(JsonBody, SimdjsonAndItsFallbackAnswerAsNlohmannAloneOnObjects, ()) {
  JsonBodyReader reader;
  const std::string body = *ObjectBody();
  RC_ASSERT(Disagreement(reader, body) == "");
}

TEST(JsonBody, WhatSimdjsonRefusesIsReadByNlohmann) {
  JsonBodyReader reader;
  for (const std::string& body : {
           std::string(R"({"user_id": "u", "n": 123456789012345678901234567890})"),
           std::string("\xef\xbb\xbf{\"user_id\": \"u\"}"),
           R"({"user_id": "u", "deep": )" + std::string(2000, '[') + std::string(2000, ']') + "}",
       }) {
    const Result<TopLevelMembers> read = reader.Read(body, kShape);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read->String("user_id"), "u");
    EXPECT_EQ(Disagreement(reader, body), "") << body;
  }
}

TEST(JsonBody, TheLaterOfTwoMembersCountsAndErrorsNameTheMember) {
  JsonBodyReader reader;
  const Result<TopLevelMembers> read =
      reader.Read(R"({"user_id": 1, "user_id": "u", "scope": 2.5, "endpoint": ""})", kShape);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read->String("user_id"), "u");
  EXPECT_EQ(read->String("scope").status().message(), "scope: expected a string, found a number");
  EXPECT_EQ(read->String("endpoint").status().message(), "endpoint: empty");
  EXPECT_EQ(read->String("x").status().message(), "x: missing");
  EXPECT_EQ(*read->String("x", "fallback"), "fallback");
  EXPECT_EQ(reader.Read("[1]", kShape).status().message(),
            R"(the body is an array; expected {"user_id": ...})");
  EXPECT_EQ(reader.Read("{", kShape).status().message(),
            R"(the body is not JSON; expected {"user_id": ...})");
}

}  // namespace
}  // namespace ratelab
