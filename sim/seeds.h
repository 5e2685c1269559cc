// The seeds a sweep or a search runs: a range, or a shard of one (every N-th seed from the K-th),
// so that N jobs of a CI system's matrix cover the range between them, each seed once.
#ifndef RATELAB_SIM_SEEDS_H_
#define RATELAB_SIM_SEEDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "impl/core/status.h"

namespace ratelab {

// The K-th of N shards (1 <= K <= N).
struct Shard {
  uint64_t index = 1;
  uint64_t count = 1;
  bool operator==(const Shard&) const = default;
};

// The most shards a range is cut into.
inline constexpr uint64_t kMostShards = 10'000;
// The most threads a command runs seeds on at once (--jobs: run's sweep, check's search).
inline constexpr int kMostJobs = 256;

// "K/N": InvalidArgument naming what is wrong unless 1 <= K <= N <= kMostShards.
Result<Shard> ParseShard(std::string_view text);
std::string FormatShard(const Shard& shard);  // "2/4"

// Seeds from `first` to at most `last`, every `step`-th.
struct SeedSpan {
  uint64_t first = 1;
  uint64_t last = 1;
  uint64_t step = 1;
  uint64_t count() const { return (last - first) / step + 1; }
  uint64_t at(uint64_t i) const { return first + i * step; }
  bool operator==(const SeedSpan&) const = default;
};

// The seeds of [first, last] that shard `shard` runs: first + K - 1, then every N-th.
// InvalidArgument when the range has fewer seeds than the shard's number (it would run none).
Result<SeedSpan> ShardOf(uint64_t first, uint64_t last, const Shard& shard);

}  // namespace ratelab

#endif  // RATELAB_SIM_SEEDS_H_
