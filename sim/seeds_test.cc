#include "sim/seeds.h"

#include <gtest/gtest.h>

#include <set>

namespace ratelab {
namespace {

TEST(Shards, ParseKOfNAndNameWhatIsWrong) {
  const Result<Shard> s = ParseShard("2/4");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, (Shard{2, 4}));
  EXPECT_EQ(FormatShard(*s), "2/4");
  for (const char* bad : {"", "2", "2/", "/4", "a/4", "2/4/1", "-1/4", "2 /4"}) {
    EXPECT_EQ(
        ParseShard(bad).status().message(),
        "'" + std::string(bad) + "' is not a shard: expected K/N, e.g. 2/4 (the second of 4)");
  }
  for (const char* bad : {"0/4", "5/4", "1/0", "1/10001"}) {
    EXPECT_EQ(ParseShard(bad).status().message(),
              "'" + std::string(bad) + "' is not a shard: K/N needs 1 <= K <= N <= 10000");
  }
}

// The N shards of a range run every seed of it once between them.
TEST(Shards, CoverTheRangeEachSeedOnce) {
  for (const uint64_t n : {1, 2, 3, 7, 10}) {
    std::multiset<uint64_t> seen;
    for (uint64_t k = 1; k <= n; ++k) {
      const Result<SeedSpan> span = ShardOf(5, 14, Shard{k, n});
      ASSERT_TRUE(span.ok()) << span.status();
      for (uint64_t i = 0; i < span->count(); ++i) seen.insert(span->at(i));
      EXPECT_LE(span->at(span->count() - 1), 14u);
    }
    std::multiset<uint64_t> all;
    for (uint64_t s = 5; s <= 14; ++s) all.insert(s);
    EXPECT_EQ(seen, all) << n << " shards";
  }
  EXPECT_EQ(*ShardOf(1, 200, Shard{2, 4}), (SeedSpan{2, 200, 4}));
  EXPECT_EQ(ShardOf(1, 200, Shard{2, 4})->count(), 50u);
  // A shard past the range's seeds would run none: refused.
  EXPECT_EQ(ShardOf(1, 3, Shard{4, 5}).status().message(),
            "--shard 4/5: the seeds 1..3 are fewer than 4, so this shard would run none");
  // At the end of the seeds, no step runs past it.
  const uint64_t top = UINT64_MAX;
  const Result<SeedSpan> last = ShardOf(top - 2, top, Shard{2, 2});
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->count(), 1u);
  EXPECT_EQ(last->at(0), top - 1);
}

}  // namespace
}  // namespace ratelab
