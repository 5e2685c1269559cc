#include "sim/log_replay.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

std::vector<Arrival> Parse(const std::string& text, LogFormat f = LogFormat::kAuto) {
  Result<AccessLog> r = ParseAccessLog(text, "log", f);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->arrivals : std::vector<Arrival>{};
}

std::string LogErrorOf(const std::string& text, LogFormat f = LogFormat::kAuto) {
  Result<AccessLog> r = ParseAccessLog(text, "log", f);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(AccessLogCsv, UnixSecondsRfc3339HeaderCommentsAndOptionalFields) {
  const std::vector<Arrival> a = Parse(
      "timestamp,key,endpoint,cost\n"
      "# a comment\n"
      "1700000000.25,alice\n"
      "\n"
      "2023-11-14T22:13:20.5Z,bob,/api/login,3\n"
      "2023-11-14T23:13:21+01:00,carol\n");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(ToUnixNanos(a[0].at), 1'700'000'000'250'000'000);
  EXPECT_EQ(a[0].user, "alice");
  EXPECT_EQ(a[0].endpoint, "/api");
  EXPECT_EQ(ToUnixNanos(a[1].at), 1'700'000'000'500'000'000);
  EXPECT_EQ(a[1].endpoint, "/api/login");
  EXPECT_EQ(a[1].cost, 3);
  EXPECT_EQ(ToUnixNanos(a[2].at), 1'700'000'001'000'000'000);  // +01:00 is an hour ahead of UTC
}

TEST(AccessLogCsv, ErrorsNameTheLine) {
  EXPECT_EQ(LogErrorOf("1700000000,a\n1700000001,b,/x\n"),
            "log:2: expected timestamp,key or timestamp,key,endpoint,cost (got 3 fields)");
  EXPECT_EQ(LogErrorOf("1700000000,a,/x,0\n"),
            "log:1: bad cost '0' (expected a whole number of at least 1)");
  EXPECT_EQ(LogErrorOf("1700000000,\n"), "log:1: empty key");
  EXPECT_EQ(LogErrorOf("2023-13-14T22:13:20Z,a\n"),
            "log:1: bad timestamp '2023-13-14T22:13:20Z' (expected unix seconds such as "
            "1700000000.250, or RFC 3339 such as 2023-11-14T22:13:20Z, from 1970 to 2199)");
  EXPECT_EQ(LogErrorOf("# nothing\n"), "log: the log holds no requests");
  // Any bytes may be in a log; a key or an endpoint is text, as every report writes it.
  EXPECT_EQ(LogErrorOf("1700000000,a\n1700000001,caf\xe9\n"), "log:2: the key is not UTF-8 text");
  EXPECT_EQ(LogErrorOf("1700000000,a,/\xff,1\n"), "log:1: the endpoint is not UTF-8 text");
}

// Found by fuzz_access_log: a year past 2262 overflowed the instant (undefined behaviour).
TEST(AccessLogCsv, TimestampsBeyondTheYearsReadAreRefused) {
  for (const char* ts :
       {"2700-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "7258118400", "99999999999999999"}) {
    EXPECT_NE(LogErrorOf(std::string(ts) + ",a\n").find("bad timestamp"), std::string::npos) << ts;
  }
  EXPECT_EQ(Parse("7258118399,a\n").size(), 1u);  // 2199-12-31T23:59:59Z
  EXPECT_NE(LogErrorOf("1.2.3.4 - - [10/Oct/9999:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1\n",
                       LogFormat::kCommon)
                .find("bad date"),
            std::string::npos);
}

TEST(AccessLogCommon, CommonAndCombinedFormats) {
  const std::vector<Arrival> a = Parse(
      "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /apache_pb.gif?x=1 HTTP/1.0\" 200 "
      "2326\n"
      "10.0.0.2 - - [10/Oct/2000:20:55:37 +0000] \"POST /api/login HTTP/1.1\" 429 12 "
      "\"http://example.com/\" \"curl/8.0\"\n"
      "10.0.0.3 - - [10/Oct/2000:20:55:38 +0000] \"-\" 400 0\n");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].user, "127.0.0.1");
  EXPECT_EQ(a[0].endpoint, "/apache_pb.gif");
  EXPECT_EQ(a[1].at - a[0].at, std::chrono::seconds(1));  // -0700 is 7 hours behind UTC
  EXPECT_EQ(a[1].endpoint, "/api/login");
  EXPECT_EQ(a[2].endpoint, "/");
  EXPECT_EQ(ToUnixNanos(a[0].at), 971'211'336'000'000'000);
}

TEST(AccessLogCommon, ErrorsNameTheLine) {
  EXPECT_EQ(LogErrorOf("1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1\n"
                       "1.2.3.4 - - [32/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1\n"),
            "log:2: bad date '32/Oct/2000:13:55:36 -0700' (expected 10/Oct/2000:13:55:36 -0700, "
            "from 1970 to 2199)");
  EXPECT_EQ(LogErrorOf("just words\n", LogFormat::kCommon),
            "log:1: not in common log format (expected host ident user [date] \"request\" status "
            "bytes)");
}

TEST(AccessLog, KeepsTheZoneItsTimesWereWrittenIn) {
  const auto zone = [](const std::string& text) {
    Result<AccessLog> r = ParseAccessLog(text, "log", LogFormat::kAuto);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->utc_offset : std::nullopt;
  };
  const std::string line = " - - [14/Mar/2026:09:00:00 +0100] \"GET / HTTP/1.1\" 200 1\n";
  EXPECT_EQ(zone("a" + line + "b" + line), std::chrono::hours(1));
  EXPECT_EQ(zone("a - - [14/Mar/2026:09:00:00 -0530] \"GET / HTTP/1.1\" 200 1\n"),
            -std::chrono::minutes(330));
  EXPECT_EQ(zone("2026-03-14T09:00:00+01:00,a\n"), std::chrono::hours(1));
  EXPECT_EQ(zone("2026-03-14T09:00:00Z,a\n"), Duration::zero());
  EXPECT_EQ(zone("1700000000,a\n"), std::nullopt);  // unix seconds: no zone
  // Records in several zones: none.
  EXPECT_EQ(zone("2026-03-14T09:00:00+01:00,a\n2026-03-14T09:00:00+02:00,a\n"), std::nullopt);
  // An offset no zone has is refused, as the report could not carry it.
  EXPECT_NE(LogErrorOf("2026-03-14T09:00:00+30:00,a\n").find("log:1: bad timestamp"),
            std::string::npos);
  EXPECT_NE(LogErrorOf("a - - [14/Mar/2026:09:00:00 +3000] \"GET / HTTP/1.1\" 200 1\n",
                       LogFormat::kCommon)
                .find("log:1: bad date"),
            std::string::npos);
  EXPECT_NE(LogErrorOf("a - - [14/Mar/2026:09:00:00 +0160] \"GET / HTTP/1.1\" 200 1\n",
                       LogFormat::kCommon)
                .find("log:1: bad date"),
            std::string::npos);
  // The instant is the same whichever zone wrote it.
  EXPECT_EQ(Parse("2026-03-14T09:00:00+01:00,a\n")[0].at, Parse("2026-03-14T08:00:00Z,a\n")[0].at);
}

TEST(AccessLogReplay, ShiftKeepsTheTimeOfDayAndNeverGoesBeforeTheStart) {
  std::vector<Arrival> a = Parse("1700000000.25,a\n1700000060,b\n");  // 22:13:20.250 UTC
  const Instant start = FromUnixNanos(0) + std::chrono::hours(12);
  ShiftToDayOf(a, start);
  EXPECT_EQ(FormatInstant(a[0].at), "22:13:20.250");
  EXPECT_GE(a[0].at, start);
  EXPECT_EQ(a[1].at - a[0].at, std::chrono::milliseconds(59'750));
  std::vector<Arrival> early = Parse("1700000000,a\n");
  ShiftToDayOf(early, start + std::chrono::hours(11));  // 23:00: 22:13 that day is too early
  EXPECT_GE(early[0].at, start + std::chrono::hours(11));
  EXPECT_EQ(FormatInstant(early[0].at), "1970-01-02 22:13:20.000");
}

}  // namespace
}  // namespace ratelab
