// Shared by the oracle implementations; not part of the model's interface.
#ifndef RATELAB_JUDGE_ORACLES_INTERNAL_H_
#define RATELAB_JUDGE_ORACLES_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/history.h"

namespace ratelab::internal {

// Events of `h` passing `keep`, grouped by key: groups in key order, each in (invoke, id) order.
// One flat array of pointers holds every group (a few allocations however many keys there are).
struct KeyGroup {
  std::string_view key;
  std::span<const HistoryEvent* const> events;
};
class KeyGroups {
 public:
  std::vector<KeyGroup>::const_iterator begin() const { return groups_.begin(); }
  std::vector<KeyGroup>::const_iterator end() const { return groups_.end(); }

 private:
  template <typename Keep>
  friend KeyGroups GroupByKey(const History& h, Keep keep);
  std::vector<const HistoryEvent*> storage_;
  std::vector<KeyGroup> groups_;
};
template <typename Keep>
KeyGroups GroupByKey(const History& h, Keep keep);

std::vector<HistoryEvent> Copy(std::span<const HistoryEvent* const> events, size_t from, size_t to);

bool InvokeOrder(const HistoryEvent* a, const HistoryEvent* b);

// GroupByKey's `keep` for the admitted events (a lambda, which GroupByKey inlines).
inline constexpr auto Admitted = [](const HistoryEvent& e) { return e.admitted(); };

template <typename Keep>
KeyGroups GroupByKey(const History& h, Keep keep) {
  // One pass gives each kept event its key's dense index (the simulator's key_id where every
  // kept event has one, else by hashing the keys); a counting sort then places the events group
  // by group, each group in history order.
  std::vector<std::string_view> keys;
  std::vector<std::pair<uint32_t, const HistoryEvent*>> kept;  // (key index, event)
  kept.reserve(h.size());
  std::vector<int64_t> dense;  // by key_id: its index in `keys`, or -1
  bool interned = true;
  for (const HistoryEvent& e : h) {
    if (!keep(e)) continue;
    if (e.key_id < 0) {
      interned = false;
      break;
    }
    const auto id = static_cast<size_t>(e.key_id);
    if (id >= dense.size()) dense.resize(std::max(id + 1, 2 * dense.size()), -1);
    if (dense[id] < 0) {
      dense[id] = static_cast<int64_t>(keys.size());
      keys.push_back(e.key);
    }
    kept.emplace_back(static_cast<uint32_t>(dense[id]), &e);
  }
  if (!interned) {
    keys.clear();
    kept.clear();
    std::unordered_map<std::string_view, uint32_t> index;
    for (const HistoryEvent& e : h) {
      if (!keep(e)) continue;
      auto [it, inserted] = index.try_emplace(e.key, static_cast<uint32_t>(keys.size()));
      if (inserted) keys.push_back(e.key);
      kept.emplace_back(it->second, &e);
    }
  }
  std::vector<uint32_t> order;  // key indices in key order
  order.reserve(keys.size());
  if (interned) {  // ids are in key order already
    for (const int64_t k : dense) {
      if (k >= 0) order.push_back(static_cast<uint32_t>(k));
    }
  } else {
    for (uint32_t k = 0; k < keys.size(); ++k) order.push_back(k);
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  }
  std::vector<size_t> count(keys.size(), 0);
  for (const auto& [k, e] : kept) ++count[k];
  std::vector<size_t> start(keys.size());  // by key index: where its group begins
  size_t at = 0;
  for (uint32_t k : order) {
    start[k] = at;
    at += count[k];
  }
  KeyGroups out;
  out.storage_.resize(kept.size());
  std::vector<size_t> fill = start;
  for (const auto& [k, e] : kept) out.storage_[fill[k]++] = e;
  out.groups_.reserve(keys.size());
  for (uint32_t k : order) {
    const auto first = out.storage_.begin() + static_cast<std::ptrdiff_t>(start[k]);
    const auto last = out.storage_.begin() + static_cast<std::ptrdiff_t>(fill[k]);
    if (!std::is_sorted(first, last, InvokeOrder)) std::stable_sort(first, last, InvokeOrder);
    out.groups_.push_back({keys[k], std::span<const HistoryEvent* const>(first, last)});
  }
  return out;
}

}  // namespace ratelab::internal

#endif  // RATELAB_JUDGE_ORACLES_INTERNAL_H_
