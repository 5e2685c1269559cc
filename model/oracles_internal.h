// Shared by the oracle implementations; not part of the model's interface.
#ifndef RATELAB_MODEL_ORACLES_INTERNAL_H_
#define RATELAB_MODEL_ORACLES_INTERNAL_H_

#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "model/history.h"

namespace ratelab::internal {

// Events of `h` passing `keep`, grouped by key, each group in (apply, id) order.
template <typename Keep>
std::map<std::string_view, std::vector<const HistoryEvent*>> GroupByKey(const History& h,
                                                                        Keep keep);

// Every event of `h` with an answer, in (apply, id) order.
std::vector<const HistoryEvent*> AnsweredInApplyOrder(const History& h);

std::vector<HistoryEvent> Copy(const std::vector<const HistoryEvent*>& events, size_t from,
                               size_t to);

bool ApplyOrder(const HistoryEvent* a, const HistoryEvent* b);

template <typename Keep>
std::map<std::string_view, std::vector<const HistoryEvent*>> GroupByKey(const History& h,
                                                                        Keep keep) {
  std::map<std::string_view, std::vector<const HistoryEvent*>> groups;
  for (const HistoryEvent& e : h) {
    if (keep(e)) groups[e.key].push_back(&e);
  }
  for (auto& [key, events] : groups) std::stable_sort(events.begin(), events.end(), ApplyOrder);
  return groups;
}

}  // namespace ratelab::internal

#endif  // RATELAB_MODEL_ORACLES_INTERNAL_H_
