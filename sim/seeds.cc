#include "sim/seeds.h"

#include <charconv>

namespace ratelab {

namespace {

std::optional<uint64_t> Number(std::string_view text) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  if (text.empty() || std::from_chars(text.data(), end, v).ptr != end) return std::nullopt;
  return v;
}

}  // namespace

Result<Shard> ParseShard(std::string_view text) {
  const size_t slash = text.find('/');
  const std::optional<uint64_t> k =
      slash == std::string_view::npos ? std::nullopt : Number(text.substr(0, slash));
  const std::optional<uint64_t> n =
      slash == std::string_view::npos ? std::nullopt : Number(text.substr(slash + 1));
  if (!k || !n) {
    return absl::InvalidArgumentError("'" + std::string(text) +
                                      "' is not a shard: expected K/N, e.g. 2/4 (the second of 4)");
  }
  if (*n < 1 || *n > kMostShards || *k < 1 || *k > *n) {
    return absl::InvalidArgumentError(
        "'" + std::string(text) +
        "' is not a shard: K/N needs 1 <= K <= N <= " + std::to_string(kMostShards));
  }
  return Shard{*k, *n};
}

std::string FormatShard(const Shard& shard) {
  return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

Result<SeedSpan> ShardOf(uint64_t first, uint64_t last, const Shard& shard) {
  if (last - first < shard.index - 1) {
    return absl::InvalidArgumentError("--shard " + FormatShard(shard) + ": the seeds " +
                                      std::to_string(first) + ".." + std::to_string(last) +
                                      " are fewer than " + std::to_string(shard.index) +
                                      ", so this shard would run none");
  }
  return SeedSpan{first + shard.index - 1, last, shard.count};
}

}  // namespace ratelab
