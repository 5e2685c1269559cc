#include "impl/service/headers.h"

#include <gtest/gtest.h>

#include "impl/service/structured_fields.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z and a bit.
constexpr Instant kNow = FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000 + 250'000'000);

std::string Value(const AnswerHeaders& headers, const std::string& name) {
  for (const AnswerHeader& h : headers) {
    if (h.name.view() == name) return std::string(h.value.view());
  }
  return "(absent)";
}

TEST(RateLimitHeaders, AnAdmissionSaysTheLimitWhatRemainsAndWhenItIsAllBack) {
  const Policy policy = Policy::Window(Algorithm::kFixedWindow, 100, seconds(60));
  const Decision d{true, 100, 42, kNow + milliseconds(29'750), Duration(0)};
  const AnswerHeaders h = RateLimitHeaders(d, policy, "r1", kNow);
  EXPECT_EQ(Value(h, "X-RateLimit-Limit"), "100");
  EXPECT_EQ(Value(h, "X-RateLimit-Remaining"), "42");
  EXPECT_EQ(Value(h, "X-RateLimit-Reset"), "1767225630") << "unix seconds of 00:00:30.000";
  EXPECT_EQ(Value(h, "RateLimit-Policy"), "\"r1\";q=100;w=60");
  EXPECT_EQ(Value(h, "RateLimit"), "\"r1\";r=42;t=30") << "29.75s, rounded up";
  EXPECT_EQ(Value(h, "Retry-After"), "(absent)");
}

TEST(RateLimitHeaders, ADenialSaysWhenToComeBackNeverEarlierThanTheExactWait) {
  const Policy bucket = Policy::Bucket(Algorithm::kTokenBucket, 10, milliseconds(100));
  for (const auto& [wait, seconds_text] :
       {std::pair{milliseconds(1), "1"}, std::pair{milliseconds(1000), "1"},
        std::pair{milliseconds(1001), "2"}, std::pair{milliseconds(59'999), "60"}}) {
    const Decision d{false, 10, 0, kNow + wait, wait};
    const AnswerHeaders h = RateLimitHeaders(d, bucket, "b", kNow);
    EXPECT_EQ(Value(h, "Retry-After"), seconds_text);
    EXPECT_EQ(Value(h, "RateLimit-Policy"), "\"b\";q=10;w=1") << "a bucket fills in 10 x 100ms";
  }
  const Decision never{false, 10, 0, kNow, kNever};
  EXPECT_EQ(Value(RateLimitHeaders(never, bucket, "b", kNow), "Retry-After"), "(absent)")
      << "no wait admits a request over the burst";
}

TEST(RateLimitHeaders, ARuleNameIsAStructuredFieldsStringWhateverItHolds) {
  const auto quoted = [](std::string_view text) {
    HeaderValue out("x=");
    AppendStructuredString(text, out);
    return std::string(out.view());
  };
  EXPECT_EQ(quoted("plain"), "x=\"plain\"");
  EXPECT_EQ(quoted("0b5e2c1d-7f3a-4e2b-9c1d-5e6f7a8b9c0d"),
            "x=\"0b5e2c1d-7f3a-4e2b-9c1d-5e6f7a8b9c0d\"");
  EXPECT_EQ(quoted(""), "x=\"\"");
  EXPECT_EQ(quoted("a\"b\\c"), "x=\"a\\\"b\\\\c\"");
  EXPECT_EQ(quoted("tab\there\xc3\xa9"), "x=\"tab?here??\"");
  EXPECT_EQ(quoted(std::string("nul\0end", 7)), "x=\"nul?end\"");
  EXPECT_EQ(quoted(" ~\x7f\x1f"), "x=\" ~??\"") << "printable ASCII is 0x20 to 0x7e";
}

TEST(HeaderValue, HoldsTextOfAnyLengthAndWritesWholeNumbersInDecimal) {
  EXPECT_EQ(HeaderValue::Cat("\"r\";q=", int64_t{-12}, ";w=", uint64_t{18'446'744'073'709'551'615u},
                             ';', std::string("end")),
            "\"r\";q=-12;w=18446744073709551615;end");
  const std::string long_text(3 * HeaderValue::kInPlace + 1, 'x');
  HeaderValue v = "a";
  v.Append(long_text);
  v.Append(int32_t{7});
  EXPECT_EQ(v, "a" + long_text + "7");
  EXPECT_EQ(v.size(), long_text.size() + 2);
  EXPECT_EQ(HeaderValue(), "");
  EXPECT_TRUE(HeaderValue().empty());
}

// What the service writes, a client reads back by the grammar and finds equal to the decision.
TEST(RateLimitHeaders, ReadBackByTheStructuredFieldsGrammarTheySayWhatTheDecisionSays) {
  const Policy policies[] = {Policy::Window(Algorithm::kFixedWindow, 100, seconds(60)),
                             Policy::Window(Algorithm::kSlidingLog, 7, milliseconds(1500)),
                             Policy::Bucket(Algorithm::kTokenBucket, 10, milliseconds(100))};
  for (const Policy& policy : policies) {
    // The last is longer than a header's value holds in place (HeaderValue::kInPlace).
    for (const std::string& name : std::vector<std::string>{
             "r1", "a \"quoted\" \\ name", "user:*:/api/*", std::string(150, 'n') + "\\"}) {
      for (const Decision& d : {Decision{true, policy.limit, 3, kNow + milliseconds(2'001)},
                                Decision{false, policy.limit, 0, kNow + seconds(9), seconds(9)}}) {
        const AnswerHeaders h = RateLimitHeaders(d, policy, name, kNow);
        const Result<std::vector<RateLimitPolicyField>> p =
            ParseRateLimitPolicy(Value(h, "RateLimit-Policy"));
        ASSERT_TRUE(p.ok()) << p.status();
        ASSERT_EQ(p->size(), 1u);
        EXPECT_EQ((*p)[0].name, name);
        EXPECT_EQ((*p)[0].quota, policy.limit);
        ASSERT_TRUE((*p)[0].window.has_value());
        EXPECT_GE(*(*p)[0].window * 1'000'000'000, policy.ClaimWindow().count())
            << "the window in whole seconds, rounded up";
        const Result<std::vector<RateLimitField>> r = ParseRateLimit(Value(h, "RateLimit"));
        ASSERT_TRUE(r.ok()) << r.status();
        ASSERT_EQ(r->size(), 1u);
        EXPECT_EQ((*r)[0].name, name);
        EXPECT_EQ((*r)[0].remaining, d.remaining);
        EXPECT_EQ((*r)[0].reset, SecondsUntil(kNow, d.reset));
        EXPECT_EQ(std::to_string((*r)[0].remaining), Value(h, "X-RateLimit-Remaining"));
      }
    }
  }
}

TEST(StructuredFields, ListsOfItemsWithParametersAsRfc8941ReadsThem) {
  const Result<std::vector<SfItem>> list =
      ParseSfList(R"(  "a";q=1;w=60 ,	tok/en:x;flag;n=-5;d=1.25;s="x";b=:AQ==:, ?0  )");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ((*list)[0].value, (SfBareItem{SfBareItem::Kind::kString, 0, "a"}));
  EXPECT_EQ((*list)[0].Parameter("w")->integer, 60);
  EXPECT_EQ((*list)[1].value, (SfBareItem{SfBareItem::Kind::kToken, 0, "tok/en:x"}));
  EXPECT_EQ(*(*list)[1].Parameter("flag"), (SfBareItem{SfBareItem::Kind::kBoolean, 1, ""}));
  EXPECT_EQ((*list)[1].Parameter("n")->integer, -5);
  EXPECT_EQ(*(*list)[1].Parameter("d"), (SfBareItem{SfBareItem::Kind::kDecimal, 0, "1.25"}));
  EXPECT_EQ((*list)[1].Parameter("b")->text, "AQ==");
  EXPECT_EQ((*list)[2].value, (SfBareItem{SfBareItem::Kind::kBoolean, 0, ""}));
  EXPECT_TRUE(ParseSfList("").value().empty());
  EXPECT_EQ(ParseSfList(R"("a";q=1;q=2)").value()[0].Parameter("q")->integer, 2)
      << "a key given again takes the later value";
}

TEST(StructuredFields, EachMistakeIsNamedWithWhereItIs) {
  const std::pair<std::string, std::string> lists[] = {
      {R"("open)", "at byte 6: a String with no closing '\"'"},
      {R"("a\n")", "at byte 4: a String may escape only '\"' and '\\'"},
      {"\"caf\xc3\xa9\"", "at byte 5: a String holds only printable ASCII"},
      {R"("a",)", "at byte 5: a ',' with no member after it"},
      {R"("a" "b")", "at byte 5: expected ',' or the end after a member"},
      {R"(("a" "b"))", "at byte 1: an Inner List, which these fields do not have"},
      {R"("a";Q=1)", "at byte 5: expected a parameter's name (a lowercase letter or '*')"},
      {R"("a";q=)", "at byte 7: expected a value, found the end"},
      {"1234567890123456", "at byte 16: an Integer of more than 15 digits"},
      {"1.2345", "at byte 7: a Decimal needs 1 to 3 digits after '.'"},
      {"?2", "at byte 2: a Boolean is ?0 or ?1"},
      {":AQ==", "at byte 6: a Byte Sequence with no closing ':'"},
  };
  for (const auto& [text, error] : lists) {
    const Result<std::vector<SfItem>> r = ParseSfList(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message(), error) << text;
  }
  const std::pair<std::string, std::string> policies[] = {
      {"default;q=10", "member 1: expected a String naming a policy, found a Token"},
      {R"("a";w=60)", "member 1 (\"a\"): q: missing"},
      {R"("a";q=1, "burst";q="10")",
       "member 2 (\"burst\"): q: expected an Integer, found a String"},
      {R"("a";q=-1)", "member 1 (\"a\"): q: -1 is below 0"},
      {R"("a";q=1;w=0)", "member 1 (\"a\"): w: 0 is below 1"},
      {R"("a";q=1;w=1.5)", "member 1 (\"a\"): w: expected an Integer, found a Decimal"},
  };
  for (const auto& [text, error] : policies) {
    const Result<std::vector<RateLimitPolicyField>> r = ParseRateLimitPolicy(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message(), error) << text;
  }
  EXPECT_EQ(ParseRateLimit(R"("a";t=3)").status().message(), "member 1 (\"a\"): r: missing");
  EXPECT_EQ(ParseRateLimit(R"("a";r=5000)").value()[0], (RateLimitField{"a", 5000, std::nullopt}));
}

TEST(StructuredFields, DictionariesReadTheirMembersInOrder) {
  const auto d = ParseSfDictionary("limit=100, remaining=50;x, reset=30, flag, limit=7");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->size(), 4u);
  EXPECT_EQ((*d)[0].first, "limit");
  EXPECT_EQ((*d)[0].second.value.integer, 7) << "a key given again takes the later value";
  EXPECT_EQ((*d)[1].second.value.integer, 50);
  EXPECT_NE((*d)[1].second.Parameter("x"), nullptr);
  EXPECT_EQ((*d)[3].second.value, (SfBareItem{SfBareItem::Kind::kBoolean, 1, ""}));
  EXPECT_EQ(ParseSfDictionary("Limit=1").status().message(),
            "at byte 1: expected a key (a lowercase letter or '*')");
  EXPECT_EQ(ParseSfDictionary("a=(1 2)").status().message(),
            "at byte 3: an Inner List, which these fields do not have");
}

TEST(StructuredFields, EarlierDraftsAreReadAsTheyWereDefined) {
  // Draft 6 and 7's policy: the quota is the member.
  EXPECT_EQ(ParseAnyRateLimitPolicy("5;w=60, 100;w=3600").value(),
            (std::vector<RateLimitPolicyField>{{"", 5, 60}, {"", 100, 3600}}));
  EXPECT_EQ(ParseAnyRateLimitPolicy(R"("p";q=5;w=60)").value(),
            (std::vector<RateLimitPolicyField>{{"p", 5, 60}}));
  EXPECT_EQ(ParseAnyRateLimitPolicy("5;w=0").status().message(), "member 1: w: 0 is below 1");
  EXPECT_EQ(ParseAnyRateLimitPolicy("default;q=10").status().message(),
            "member 1: expected a String naming a policy, found a Token");
  // Draft 7's RateLimit: a Dictionary.
  EXPECT_EQ(ParseAnyRateLimit("limit=5, remaining=4, reset=60").value(),
            (std::vector<RateLimitField>{{"", 4, 60}}));
  EXPECT_EQ(ParseAnyRateLimit(R"("p";r=4;t=60)").value(),
            (std::vector<RateLimitField>{{"p", 4, 60}}));
  EXPECT_EQ(ParseAnyRateLimit("limit=5, remaining=-1, reset=60").status().message(),
            "remaining: -1 is below 0");
  EXPECT_EQ(ParseAnyRateLimit(R"("p";r=1.5)").status().message(),
            "member 1 (\"p\"): r: expected an Integer, found a Decimal");
}

}  // namespace
}  // namespace ratelab
