// Shared by the oracle implementations; not part of the model's interface.
#ifndef RATELAB_MODEL_ORACLES_INTERNAL_H_
#define RATELAB_MODEL_ORACLES_INTERNAL_H_

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/history.h"

namespace ratelab::internal {

// Events of `h` passing `keep`, grouped by key: groups in key order, each in (invoke, id) order.
using KeyGroups = std::vector<std::pair<std::string_view, std::vector<const HistoryEvent*>>>;
template <typename Keep>
KeyGroups GroupByKey(const History& h, Keep keep);

std::vector<HistoryEvent> Copy(const std::vector<const HistoryEvent*>& events, size_t from,
                               size_t to);

bool InvokeOrder(const HistoryEvent* a, const HistoryEvent* b);

template <typename Keep>
KeyGroups GroupByKey(const History& h, Keep keep) {
  // Hash first (one string comparison per event at most), sort the distinct keys after.
  std::unordered_map<std::string_view, size_t> index;
  KeyGroups groups;
  for (const HistoryEvent& e : h) {
    if (!keep(e)) continue;
    auto [it, inserted] = index.try_emplace(e.key, groups.size());
    if (inserted) groups.emplace_back(e.key, std::vector<const HistoryEvent*>{});
    groups[it->second].second.push_back(&e);
  }
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [key, events] : groups) {
    if (!std::is_sorted(events.begin(), events.end(), InvokeOrder)) {
      std::stable_sort(events.begin(), events.end(), InvokeOrder);
    }
  }
  return groups;
}

}  // namespace ratelab::internal

#endif  // RATELAB_MODEL_ORACLES_INTERNAL_H_
