#include "reports/merge.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

SweepReport Shard(const std::string& shard, std::vector<SeedReport> seeds) {
  SweepReport s;
  s.scenario = "demo";
  s.shard = shard;
  s.reproduce = "ratelab run demo.yaml --seed {seed}";
  for (const SeedReport& seed : seeds) s.seeds_with_violations += seed.violations > 0;
  s.seeds = std::move(seeds);
  for (const SeedReport& seed : s.seeds) {
    if (seed.violations > 0 && !s.first_failing) {
      s.first_failing = RunReport{};
      s.first_failing->seed = seed.seed;
    }
  }
  return s;
}

TEST(MergeSweeps, EverySeedInOrderAndTheLowestFailingRun) {
  const Result<SweepReport> merged =
      MergeSweeps({{"b.json", Shard("2/2", {{2, "b", 0}, {4, "d", 3}})},
                   {"a.json", Shard("1/2", {{1, "a", 0}, {3, "c", 1}, {5, "e", 0}})}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ(merged->seeds.size(), 5u);
  for (uint64_t i = 0; i < 5; ++i) EXPECT_EQ(merged->seeds[i].seed, i + 1);
  EXPECT_EQ(merged->seeds_with_violations, 2u);
  ASSERT_TRUE(merged->first_failing);
  EXPECT_EQ(merged->first_failing->seed, 3u);
  EXPECT_EQ(merged->shard, "");
  EXPECT_EQ(ReproduceSeed(*merged, 4), "ratelab run demo.yaml --seed 4");
}

TEST(MergeSweeps, OnlyEveryShardOfOneSweep) {
  const auto problem = [](std::vector<FromFile<SweepReport>> shards) {
    return std::string(MergeSweeps(shards).status().message());
  };
  EXPECT_EQ(problem({{"a.json", Shard("", {})}}),
            "a.json: not a shard (written without --shard K/N), so there is nothing to merge it "
            "with");
  EXPECT_EQ(problem({{"a.json", Shard("1/2", {})}, {"b.json", Shard("2/3", {})}}),
            "b.json: shard 2/3, but a.json is one of 2: not one sweep");
  EXPECT_EQ(problem({{"a.json", Shard("1/2", {})}, {"b.json", Shard("1/2", {})}}),
            "b.json: shard 1/2 is given twice (a.json too)");
  EXPECT_EQ(problem({{"a.json", Shard("1/3", {})}, {"c.json", Shard("3/3", {})}}),
            "shard 2/3 is missing: its seeds were not merged");
  SweepReport other = Shard("2/2", {});
  other.scenario = "other";
  EXPECT_EQ(problem({{"a.json", Shard("1/2", {})}, {"b.json", other}}),
            "b.json: scenario 'other', but a.json's is 'demo'");
  EXPECT_EQ(problem({}), "no shard to merge");
}

CheckReport Search(const std::string& shard, uint64_t searched, std::optional<uint64_t> found) {
  CheckReport c;
  c.protocol = "kv-sliding-log-zset";
  c.shard = shard;
  c.seeds_searched = searched;
  c.verdict = found ? CheckVerdict::kViolation : CheckVerdict::kNone;
  c.seed = found.value_or(0);
  return c;
}

TEST(MergeChecks, TheLowestSeedFoundAndEverySeedSearched) {
  Result<CheckReport> merged = MergeChecks({{"a.json", Search("1/3", 4, 10)},
                                            {"b.json", Search("2/3", 2, 5)},
                                            {"c.json", Search("3/3", 7, std::nullopt)}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->verdict, CheckVerdict::kViolation);
  EXPECT_EQ(merged->seed, 5u);
  EXPECT_EQ(merged->seeds_searched, 13u);
  EXPECT_EQ(merged->shard, "");
  merged = MergeChecks(
      {{"a.json", Search("1/2", 4, std::nullopt)}, {"b.json", Search("2/2", 4, std::nullopt)}});
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->verdict, CheckVerdict::kNone);
  EXPECT_EQ(merged->seeds_searched, 8u);
  CheckReport other = Search("2/2", 1, std::nullopt);
  other.protocol = "kv-fixed-window-lua";
  EXPECT_EQ(MergeChecks({{"a.json", Search("1/2", 1, std::nullopt)}, {"b.json", other}})
                .status()
                .message(),
            "b.json: protocol 'kv-fixed-window-lua', but a.json's is 'kv-sliding-log-zset'");
}

}  // namespace
}  // namespace ratelab
