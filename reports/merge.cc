#include "reports/merge.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "sim/seeds.h"

namespace ratelab {

namespace {

// Every shard 1..N of one N, each once: the paths and shards given.
Status CheckShards(const std::vector<std::pair<std::string, std::string>>& given) {
  if (given.empty()) return absl::InvalidArgumentError("no shard to merge");
  std::map<uint64_t, std::string> seen;  // shard number -> path
  uint64_t count = 0;
  std::string count_from;
  for (const auto& [path, text] : given) {
    Result<Shard> shard = ParseShard(text);
    if (text.empty() || !shard.ok()) {
      return absl::InvalidArgumentError(
          path +
          ": not a shard (written without --shard K/N), so there is nothing to merge it "
          "with");
    }
    if (count != 0 && shard->count != count) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": shard ", text, ", but ", count_from,
                                                     " is one of ", count, ": not one sweep"));
    }
    count = shard->count;
    count_from = path;
    if (auto [at, fresh] = seen.emplace(shard->index, path); !fresh) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": shard ", text, " is given twice (", at->second, " too)"));
    }
  }
  for (uint64_t k = 1; k <= count; ++k) {
    if (!seen.contains(k)) {
      return absl::InvalidArgumentError(
          absl::StrCat("shard ", k, "/", count, " is missing: its seeds were not merged"));
    }
  }
  return absl::OkStatus();
}

template <typename Report>
Status CheckShardsOf(const std::vector<FromFile<Report>>& shards) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const auto& [path, report] : shards) given.push_back({path, report.shard});
  return CheckShards(given);
}

// InvalidArgument naming the file whose `what` differs from the first's.
template <typename Report, typename Field>
Status CheckSame(const std::vector<FromFile<Report>>& shards, const char* what, Field field) {
  for (const auto& [path, report] : shards) {
    if (field(report) != field(shards.front().second)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", what, " '", field(report),
                                                     "', but ", shards.front().first, "'s is '",
                                                     field(shards.front().second), "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

Result<SweepReport> MergeSweeps(const std::vector<FromFile<SweepReport>>& shards) {
  if (Status s = CheckShardsOf(shards); !s.ok()) return s;
  if (Status s = CheckSame(shards, "scenario", [](const SweepReport& r) { return r.scenario; });
      !s.ok()) {
    return s;
  }
  if (Status s = CheckSame(shards, "command", [](const SweepReport& r) { return r.reproduce; });
      !s.ok()) {
    return s;
  }
  SweepReport merged;
  merged.scenario = shards.front().second.scenario;
  merged.reproduce = shards.front().second.reproduce;
  for (const auto& [path, shard] : shards) {
    merged.seeds.insert(merged.seeds.end(), shard.seeds.begin(), shard.seeds.end());
    merged.seeds_with_violations += shard.seeds_with_violations;
    if (shard.first_failing &&
        (!merged.first_failing || shard.first_failing->seed < merged.first_failing->seed)) {
      merged.first_failing = shard.first_failing;
    }
  }
  std::sort(merged.seeds.begin(), merged.seeds.end(),
            [](const SeedReport& a, const SeedReport& b) { return a.seed < b.seed; });
  return merged;
}

Result<CheckReport> MergeChecks(const std::vector<FromFile<CheckReport>>& shards) {
  if (Status s = CheckShardsOf(shards); !s.ok()) return s;
  if (Status s = CheckSame(shards, "protocol", [](const CheckReport& r) { return r.protocol; });
      !s.ok()) {
    return s;
  }
  const CheckReport* lowest = nullptr;  // the finding or failure of the lowest seed
  uint64_t searched = 0;
  for (const auto& [path, shard] : shards) {
    searched += shard.seeds_searched;
    if (shard.verdict != CheckVerdict::kNone && (lowest == nullptr || shard.seed < lowest->seed)) {
      lowest = &shard;
    }
  }
  CheckReport merged = lowest != nullptr ? *lowest : shards.front().second;
  merged.seeds_searched = searched;
  merged.shard.clear();
  return merged;
}

}  // namespace ratelab
