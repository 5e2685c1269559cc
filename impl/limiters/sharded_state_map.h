// A map from key to per-key limiter state, split into shards that each sit behind a spin lock,
// with the instant each key was last used, so that a bounded map can drop its least recently
// used keys.
//
// Invariants: a key always lives in the shard its hash selects; a shard's map is touched only
// while its lock is held. The critical section is one hash lookup plus the algorithm's
// arithmetic (tens of nanoseconds), which is why a spin lock beats a mutex here; a shard that
// must make room (With past `max_keys`) or drop what no longer matters (EraseIf) holds its lock
// for one pass over its own keys.
#ifndef RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_
#define RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

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
  static constexpr int kShardBits = 6;
  static constexpr size_t kShards = size_t{1} << kShardBits;

  // At most `max_keys` keys (0: no bound), as leveldb's sharded cache bounds itself: each shard
  // holds at most max_keys / kShards of them, rounded up.
  explicit ShardedStateMap(size_t max_keys = 0)
      : shard_cap_(max_keys == 0 ? 0 : (max_keys + kShards - 1) / kShards) {}

  // Runs `fn(State&)` on the state of `key` (default-constructed if new) under its shard's lock
  // and returns what `fn` returns; `now` (unix nanoseconds) is the key's last use from then on.
  // A new key in a full shard first has `make_room()` called with the shard's map locked: it
  // must leave the shard below its bound (MakeRoom).
  template <typename Fn, typename MakeRoom>
  auto With(std::string_view key, int64_t now, Fn fn, MakeRoom make_room) {
    // Debian's abseil has its own string_view type; heterogeneous lookup needs it.
    const absl::string_view k(key.data(), key.size());
    // One hash serves both the shard (its top bits) and the lookup (abseil's find with a
    // precomputed hash; the table itself uses the low bits).
    const size_t hash = absl::Hash<absl::string_view>{}(k);
    Shard& shard = shards_[hash >> (64 - kShardBits)];
    std::lock_guard<SpinLock> guard(shard.lock);
    auto it = shard.states.find(k, hash);
    if (it == shard.states.end()) {
      if (shard_cap_ > 0 && shard.states.size() >= shard_cap_) make_room(Locked{shard, *this});
      it = shard.states.try_emplace(std::string(key)).first;
    }
    it->second.last_used = std::max(it->second.last_used, now);
    return fn(it->second.state);
  }

  // A copy of the state of `key` (a default-constructed one if it has none), nothing inserted.
  State Copy(std::string_view key) {
    const absl::string_view k(key.data(), key.size());
    const size_t hash = absl::Hash<absl::string_view>{}(k);
    Shard& shard = shards_[hash >> (64 - kShardBits)];
    std::lock_guard<SpinLock> guard(shard.lock);
    auto it = shard.states.find(k, hash);
    return it == shard.states.end() ? State{} : it->second.state;
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
      for (const auto& [key, entry] : shard.states) fn(entry.state);
    }
  }

  // Keys held, every shard summed.
  size_t Size() {
    size_t n = 0;
    for (Shard& shard : shards_) {
      std::lock_guard<SpinLock> guard(shard.lock);
      n += shard.states.size();
    }
    return n;
  }

  // Drops every key whose state `drop(const State&)` says no longer matters, one shard at a
  // time; returns how many.
  template <typename Drop>
  size_t EraseIf(Drop drop) {
    size_t dropped = 0;
    for (Shard& shard : shards_) {
      std::lock_guard<SpinLock> guard(shard.lock);
      dropped += Locked{shard, *this}.EraseIf(drop);
    }
    return dropped;
  }

 private:
  struct Entry {
    State state;
    int64_t last_used = INT64_MIN;  // unix nanoseconds
  };
  struct alignas(64) Shard {
    SpinLock lock;
    absl::flat_hash_map<std::string, Entry> states;
  };

 public:
  // A shard whose lock the caller holds (With's `make_room`).
  class Locked {
   public:
    size_t size() const { return shard_.states.size(); }
    size_t cap() const { return map_.shard_cap_; }
    // Drops the keys whose state `drop(const State&)` says no longer matters; returns how many.
    template <typename Drop>
    size_t EraseIf(Drop drop) {
      const size_t dropped = absl::erase_if(shard_.states, [&](const auto& key_and_entry) {
        return drop(key_and_entry.second.state);
      });
      // A table a quarter full or less gives its memory back.
      if (dropped > 0 && shard_.states.size() * 4 <= shard_.states.capacity())
        shard_.states.rehash(0);
      return dropped;
    }
    // Drops the least recently used keys until no more than `keep` are left; returns how many
    // were dropped. Of keys last used at one instant, which go is the table's order.
    size_t EvictLeastRecentlyUsed(size_t keep) {
      if (shard_.states.size() <= keep) return 0;
      const size_t evict = shard_.states.size() - keep;
      std::vector<int64_t> used;
      used.reserve(shard_.states.size());
      for (const auto& [key, entry] : shard_.states) used.push_back(entry.last_used);
      std::nth_element(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(evict - 1),
                       used.end());
      const int64_t newest_evicted = used[evict - 1];
      // Those older than the newest to go all go; of those used at that instant, as many as
      // are still needed.
      size_t at_newest = static_cast<size_t>(
          std::count_if(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(evict),
                        [&](int64_t u) { return u == newest_evicted; }));
      const size_t dropped = absl::erase_if(shard_.states, [&](const auto& key_and_entry) {
        const int64_t u = key_and_entry.second.last_used;
        if (u < newest_evicted) return true;
        if (u == newest_evicted && at_newest > 0) {
          --at_newest;
          return true;
        }
        return false;
      });
      if (shard_.states.size() * 4 <= shard_.states.capacity()) shard_.states.rehash(0);
      return dropped;
    }

   private:
    friend class ShardedStateMap;
    Locked(Shard& shard, const ShardedStateMap& map) : shard_(shard), map_(map) {}
    Shard& shard_;
    const ShardedStateMap& map_;
  };

 private:
  const size_t shard_cap_;  // 0: no bound
  std::array<Shard, kShards> shards_;
};

}  // namespace ratelab::internal

#endif  // RATELAB_IMPL_LIMITERS_SHARDED_STATE_MAP_H_
