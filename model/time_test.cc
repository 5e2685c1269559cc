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

}  // namespace
}  // namespace ratelab
