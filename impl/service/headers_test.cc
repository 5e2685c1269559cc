#include "impl/service/headers.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z and a bit.
constexpr Instant kNow = FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000 + 250'000'000);

std::string Value(const std::vector<HttpHeader>& headers, const std::string& name) {
  for (const HttpHeader& h : headers) {
    if (h.name == name) return h.value;
  }
  return "(absent)";
}

TEST(RateLimitHeaders, AnAdmissionSaysTheLimitWhatRemainsAndWhenItIsAllBack) {
  const Policy policy = Policy::Window(Algorithm::kFixedWindow, 100, seconds(60));
  const Decision d{true, 100, 42, kNow + milliseconds(29'750), Duration(0)};
  const std::vector<HttpHeader> h = RateLimitHeaders(d, policy, "r1", kNow);
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
    const std::vector<HttpHeader> h = RateLimitHeaders(d, bucket, "b", kNow);
    EXPECT_EQ(Value(h, "Retry-After"), seconds_text);
    EXPECT_EQ(Value(h, "RateLimit-Policy"), "\"b\";q=10;w=1") << "a bucket fills in 10 x 100ms";
  }
  const Decision never{false, 10, 0, kNow, kNever};
  EXPECT_EQ(Value(RateLimitHeaders(never, bucket, "b", kNow), "Retry-After"), "(absent)")
      << "no wait admits a request over the burst";
}

TEST(RateLimitHeaders, ARuleNameIsAStructuredFieldsStringWhateverItHolds) {
  EXPECT_EQ(StructuredString("plain"), "\"plain\"");
  EXPECT_EQ(StructuredString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(StructuredString("tab\there\xc3\xa9"), "\"tab?here??\"");
}

}  // namespace
}  // namespace ratelab
