// A map from key to per-key limiter state, split into shards that each sit behind a spin lock.
//
// Invariants: a key always lives in the shard its hash selects; a shard's map is touched only
// while its lock is held. The critical section is one hash lookup plus the algorithm's
// arithmetic (tens of nanoseconds), which is why a spin lock beats a mutex here.
#ifndef RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_
#define RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace ratelab::internal {

class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

template <typename State>
class ShardedStateMap {
 public:
  // Runs `fn(State&)` on the state of `key` (default-constructed if new) under its shard's lock
  // and returns what `fn` returns.
  template <typename Fn>
  auto With(std::string_view key, Fn fn) {
    // Debian's abseil has its own string_view type; heterogeneous lookup needs it.
    const absl::string_view k(key.data(), key.size());
    // One hash serves both the shard (its top bits) and the lookup (abseil's find with a
    // precomputed hash; the table itself uses the low bits).
    const size_t hash = absl::Hash<absl::string_view>{}(k);
    Shard& shard = shards_[hash >> (64 - kShardBits)];
    std::lock_guard<SpinLock> guard(shard.lock);
    auto it = shard.states.find(k, hash);
    if (it == shard.states.end()) it = shard.states.try_emplace(std::string(key)).first;
    return fn(it->second);
  }

  // A copy of the state of `key` (a default-constructed one if it has none), nothing inserted.
  State Copy(std::string_view key) {
    const absl::string_view k(key.data(), key.size());
    const size_t hash = absl::Hash<absl::string_view>{}(k);
    Shard& shard = shards_[hash >> (64 - kShardBits)];
    std::lock_guard<SpinLock> guard(shard.lock);
    auto it = shard.states.find(k, hash);
    return it == shard.states.end() ? State{} : it->second;
  }

  void Clear() {
    for (Shard& shard : shards_) {
      std::lock_guard<SpinLock> guard(shard.lock);
      shard.states.clear();
    }
  }

  // Calls `fn(const State&)` for every state, shard by shard.
  template <typename Fn>
  void ForEach(Fn fn) {
    for (Shard& shard : shards_) {
      std::lock_guard<SpinLock> guard(shard.lock);
      for (const auto& [key, state] : shard.states) fn(state);
    }
  }

 private:
  static constexpr int kShardBits = 6;
  static constexpr size_t kShards = size_t{1} << kShardBits;
  struct alignas(64) Shard {
    SpinLock lock;
    absl::flat_hash_map<std::string, State> states;
  };
  std::array<Shard, kShards> shards_;
};

}  // namespace ratelab::internal

#endif  // RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_
