#include "sim/random.h"

#include <gtest/gtest.h>

#include <vector>

namespace ratelab {
namespace {

std::vector<uint64_t> Draw(Random r, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(r.Next());
  return out;
}

TEST(Random, SameSeedSameSequence) {
  EXPECT_EQ(Draw(Random(42), 100), Draw(Random(42), 100));
  EXPECT_NE(Draw(Random(42), 100), Draw(Random(43), 100));
}

TEST(Random, SequenceIsPinnedSoEveryMachineAgrees) {
  // xoshiro256** seeded by splitmix64(0): a change here changes every recorded seed's run.
  Random r(0);
  EXPECT_EQ(r.Next(), 11091344671253066420ULL);
}

TEST(Random, UniformStaysInRangeAndCoversIt) {
  Random r(7);
  std::vector<int> seen(5);
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = r.Uniform(-2, 3);
    ASSERT_GE(v, -2);
    ASSERT_LT(v, 3);
    ++seen[static_cast<size_t>(v + 2)];
  }
  for (int count : seen) EXPECT_GT(count, 150);
}

TEST(Random, ExponentialHasTheRequestedMean) {
  Random r(9);
  int64_t total = 0;
  for (int i = 0; i < 20000; ++i) total += r.Exponential(Duration(1000)).count();
  EXPECT_NEAR(static_cast<double>(total) / 20000, 1000, 30);
}

TEST(Random, ForkDependsOnSeedAndPurposeNotOnPosition) {
  Random a(5);
  Random b(5);
  b.Next();
  EXPECT_EQ(Draw(a.Fork(1), 10), Draw(b.Fork(1), 10));
  EXPECT_NE(Draw(a.Fork(1), 10), Draw(a.Fork(2), 10));
}

}  // namespace
}  // namespace ratelab
