#include "reports/timeline.h"

#include <algorithm>
#include <limits>

namespace ratelab {

std::vector<TimelineRow> WitnessTimeline(const std::vector<WitnessEvent>& witness,
                                         const std::vector<FaultReport>& faults) {
  std::vector<TimelineRow> rows;
  const double kInf = std::numeric_limits<double>::infinity();
  double first = kInf, last = -kInf;
  double lost_after = kInf;  // the earliest last step of a request never answered
  for (const WitnessEvent& e : witness) {
    const std::string node = "node " + std::to_string(e.node);
    const double sent = e.invoke_s;
    rows.push_back(
        {sent, e.id, 0, node, "sent (" + e.key + ", cost " + std::to_string(e.cost) + ")"});
    int order = 1;
    double end = sent;
    for (const WitnessStep& s : e.steps) {
      end = s.at_s;
      rows.push_back({end, e.id, order++, node, "step: " + s.label});
    }
    if (e.complete_s) {
      end = *e.complete_s;
      rows.push_back({end, e.id, order, node, e.outcome});
    } else {
      rows.push_back({end, e.id, order, node, "never answered (a crash, or the store failed)"});
      lost_after = std::min(lost_after, end);
    }
    first = std::min(first, sent);
    last = std::max(last, end);
  }
  // A request that got no answer was cut off by something after its last step: the first fault
  // after it is shown too.
  double cut = kInf;
  for (const FaultReport& f : faults) {
    if (f.from_s >= lost_after) cut = std::min(cut, f.from_s);
  }
  for (const FaultReport& f : faults) {
    if ((f.to_s < first || f.from_s > last) && f.from_s != cut) continue;  // nowhere near it
    if (f.from_s == f.to_s) {
      rows.push_back({f.from_s, -1, 0, "", "fault: " + f.what});
    } else {
      rows.push_back({f.from_s, -1, 0, "", "fault begins: " + f.what});
      rows.push_back({f.to_s, -1, 0, "", "fault ends: " + f.what});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
    if (a.at_s != b.at_s) return a.at_s < b.at_s;
    return a.id != b.id ? a.id < b.id : a.order < b.order;
  });
  return rows;
}

}  // namespace ratelab
