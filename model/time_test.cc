#include "model/time.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(Time, FloorDivRoundsTowardsNegativeInfinity) {
  EXPECT_EQ(FloorDiv(7, 2), 3);
  EXPECT_EQ(FloorDiv(-7, 2), -4);
  EXPECT_EQ(FloorDiv(-8, 2), -4);
  EXPECT_EQ(FloorDiv(0, 5), 0);
}

TEST(Time, AlignedWindowsStartAtMultiplesOfTheWindowSinceTheEpoch) {
  const Instant t = FromUnixNanos(0) + minutes(3) + seconds(59);
  EXPECT_EQ(AlignedWindowIndex(t, minutes(1)), 3);
  EXPECT_EQ(AlignedWindowStart(3, minutes(1)), FromUnixNanos(0) + minutes(3));
  EXPECT_EQ(AlignedWindowIndex(FromUnixNanos(-1), minutes(1)), -1);
}

TEST(Time, FormatInstantShowsTimeOfDayWithMilliseconds) {
  EXPECT_EQ(FormatInstant(FromUnixNanos(0) + minutes(720) + milliseconds(59'400)), "12:00:59.400");
  EXPECT_EQ(FormatInstant(FromUnixNanos(1'500'123)), "00:00:00.001500123");
  EXPECT_EQ(FormatInstant(FromUnixNanos(86'400'000'000'000LL)), "1970-01-02 00:00:00.000");
}

TEST(Time, FormatInstantToCutsToTheDigitsAsked) {
  const Instant t = FromUnixNanos(1'767'225'674'605'109'565);  // 2026-01-01 00:01:14.605109565
  EXPECT_EQ(FormatInstantTo(t, 3), "2026-01-01 00:01:14.605");
  EXPECT_EQ(FormatInstantTo(t, 6), "2026-01-01 00:01:14.605109");
  EXPECT_EQ(FormatInstantTo(FromUnixNanos(1'500'000), 6), "00:00:00.001500");
  EXPECT_EQ(FormatInstantTo(FromUnixNanos(2'000'400), 6), "00:00:00.002");      // no 000 past ms
  EXPECT_EQ(FormatInstantTo(FromUnixNanos(-1), 3), "1969-12-31 23:59:59.999");  // cut down
}

TEST(Time, FormatDurationToCutsToTheDigitsAsked) {
  EXPECT_EQ(FormatDurationTo(Duration(58'908'221'949), 3), "58.908s");
  EXPECT_EQ(FormatDurationTo(Duration(412'345), 6), "412us");
  EXPECT_EQ(FormatDurationTo(std::chrono::minutes(1) - Duration(1), 3), "59.999s");  // still < 1m
}

TEST(Time, FormatDurationUsesTheLargestExactUnit) {
  EXPECT_EQ(FormatDuration(minutes(1)), "1m");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(Duration(3)), "3ns");
  EXPECT_EQ(FormatDuration(Duration(0)), "0s");
  EXPECT_EQ(FormatDuration(kNever), "never");
  EXPECT_EQ(FormatDuration(Duration(49'092'883'022)), "49.092883022s") << "exact, never rounded";
  EXPECT_EQ(FormatDuration(seconds(90)), "90s");
  EXPECT_EQ(FormatDuration(-milliseconds(1500)), "-1.5s");
  EXPECT_EQ(FormatDuration(Duration(1'500)), "1.5us");
}

TEST(Time, ParseDurationReadsUnitsSumsAndDecimals) {
  EXPECT_EQ(ParseDuration("500ms"), milliseconds(500));
  EXPECT_EQ(ParseDuration("1m30s"), seconds(90));
  EXPECT_EQ(ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(ParseDuration("-3s"), -seconds(3));
  EXPECT_EQ(ParseDuration("2h"), minutes(120));
  EXPECT_EQ(ParseDuration("7ns"), Duration(7));
  EXPECT_EQ(ParseDuration("49.092883022s"), Duration(49'092'883'022));
  for (const char* bad : {"", "5", "ms", "1.5ns", "3 s", "1x", "-", "1s-2s", "99999999999h"}) {
    EXPECT_FALSE(ParseDuration(bad).has_value()) << bad;
  }
}

TEST(Time, ParseDurationReadsWhatFormatDurationWrites) {
  for (int64_t ns :
       {int64_t{1}, int64_t{1500}, int64_t{250'000'000}, int64_t{90'000'000'000},
        int64_t{-1'500'000'000}, int64_t{49'092'883'022}, int64_t{7'200'000'000'000}}) {
    EXPECT_EQ(ParseDuration(FormatDuration(Duration(ns))), Duration(ns)) << ns;
  }
}

TEST(ParseHttpDate, ReadsEachOfItsThreeForms) {
  const std::optional<Instant> imf = ParseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_TRUE(imf);
  EXPECT_EQ(FormatUtc(*imf), "1994-11-06T08:49:37Z");
  EXPECT_EQ(ParseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"), imf);
  EXPECT_EQ(ParseHttpDate("Sun Nov  6 08:49:37 1994"), imf);
  EXPECT_EQ(FormatUtc(*ParseHttpDate("Thu, 26 Nov 2026 10:00:05 GMT")), "2026-11-26T10:00:05Z");
  EXPECT_EQ(FormatUtc(*ParseHttpDate("Thursday, 26-Nov-26 10:00:05 GMT")), "2026-11-26T10:00:05Z");
  EXPECT_EQ(FormatUtc(*ParseHttpDate("Thu Nov 26 10:00:05 2026")), "2026-11-26T10:00:05Z");
  for (std::string_view bad :
       {"", "5", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:49:37 GMT", "Xyz, 06 Nov 1994 08:49:37 GMT",
        "Sun, 06 Now 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT ", "Sunday, 06-Nov-94 08:49:37 UTC",
        "Sun Nov  6 08:49:37 94", "Sun Nov 6 08:49:37 1994", "Sun, 06 Nov 1899 08:49:37 GMT",
        "Sun, 06 Nov 9999 08:49:37 GMT"}) {
    EXPECT_EQ(ParseHttpDate(bad), std::nullopt) << bad;
  }
}

TEST(ParseInstant, ReadsUtcDatesAndTimes) {
  const Instant new_year = FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000);
  EXPECT_EQ(ParseInstant("2026-01-01T00:00:00Z"), new_year);
  EXPECT_EQ(ParseInstant("2026-01-01"), new_year);
  EXPECT_EQ(ParseInstant("2026-01-01 00:00"), new_year);
  EXPECT_EQ(ParseInstant("1970-01-01T12:00:00.25Z"),
            FromUnixNanos(0) + std::chrono::hours(12) + std::chrono::milliseconds(250));
  EXPECT_EQ(FormatUtc(new_year), "2026-01-01T00:00:00Z");
  EXPECT_EQ(FormatUtc(new_year + std::chrono::microseconds(1500)), "2026-01-01T00:00:00.0015Z");
  EXPECT_EQ(ParseInstant(FormatUtc(new_year + Duration(7))), new_year + Duration(7));
  for (const char* bad :
       {"", "2026", "2026-13-01", "2026-02-30", "2026-01-01T24:00", "2026-01-01T00:00:00+01:00",
        "1969-12-31", "2026-01-01T00:00:00.", "2026-01-01T00:00:00.0000000001", "tomorrow"}) {
    EXPECT_FALSE(ParseInstant(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace ratelab
