// DurableSnapshot: what an in-process store (MemoryKv, MemoryDocs) finds after a restart of its
// server under its Durability. none keeps nothing; always keeps everything; everysec keeps the
// state as of the end of the last second that had a write (an append-only file fsynced once a
// second, and a crash of the machine: the unfinished second is lost).
//
// Kept lazily, entry by entry (a key, a collection): a write marks its entry before changing it,
// and the first write in a later second copies the marked entries' values into the snapshot,
// which is then exactly the state at the end of the earlier second. Untouched entries cost
// nothing, whatever the store holds.
//
// Invariant: for every entry not marked, the snapshot holds what the store holds (or neither
// holds it). Not thread-safe: the store's own lock covers it.
#ifndef RATELAB_IMPL_STORE_DURABLE_SNAPSHOT_H_
#define RATELAB_IMPL_STORE_DURABLE_SNAPSHOT_H_

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "impl/store/durability.h"
#include "model/time.h"

namespace ratelab {

// `Map` is the store's data: a map from entry keys to values (std::map, absl::flat_hash_map).
template <typename Map>
class DurableSnapshot {
 public:
  using Key = typename Map::key_type;

  explicit DurableSnapshot(Durability durability) : durability_(durability) {}

  Durability durability() const { return durability_; }

  // To be called before `data`'s entry `key` changes (or appears, or goes), at `now_ms`.
  void WillChange(const Map& data, const Key& key, int64_t now_ms) {
    if (durability_ != Durability::kEverySec) return;
    const int64_t second = FloorDiv(now_ms, 1000);
    if (second != dirty_second_) Sync(data);
    dirty_second_ = second;
    dirty_.insert(key);
  }

  // `data` is replaced wholesale (a replica promoted): all of it is as durable as it is.
  void Reset(const Map& data) {
    if (durability_ != Durability::kEverySec) return;
    durable_ = data;
    dirty_.clear();
  }

  // A restart of the server at `now_ms`: `data` becomes what survives it.
  void Restart(Map& data, int64_t now_ms) {
    switch (durability_) {
      case Durability::kNone:
        data.clear();
        break;
      case Durability::kEverySec:
        if (FloorDiv(now_ms, 1000) != dirty_second_) Sync(data);
        data = durable_;
        dirty_.clear();
        break;
      case Durability::kAlways:
        break;
    }
  }

 private:
  // The marked entries, from an earlier second, become durable as they are in `data` now.
  void Sync(const Map& data) {
    for (const Key& key : dirty_) {
      auto it = data.find(key);
      if (it == data.end()) {
        durable_.erase(key);
      } else {
        durable_.insert_or_assign(key, it->second);
      }
    }
    dirty_.clear();
  }

  const Durability durability_;
  Map durable_;                     // everysec: the state as of the last sync, but `dirty_`
  absl::flat_hash_set<Key> dirty_;  // entries written in `dirty_second_`, not yet synced
  int64_t dirty_second_ = 0;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_DURABLE_SNAPSHOT_H_
