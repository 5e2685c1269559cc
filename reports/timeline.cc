#include "reports/timeline.h"

#include <algorithm>
#include <limits>

namespace ratelab {

namespace {

constexpr char kNeverAnswered[] = "never answered (a crash, or the store failed)";

}  // namespace

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
      rows.push_back({end, e.id, order, node, kNeverAnswered});
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

std::vector<RequestRow> WitnessRequests(const std::vector<WitnessEvent>& witness,
                                        const std::vector<FaultReport>& faults) {
  std::vector<RequestRow> rows;
  for (const TimelineRow& t : WitnessTimeline(witness, faults)) {
    if (t.id < 0) rows.push_back({t.at_s, -1, "", "", 0, {}, t.what});
  }
  for (const WitnessEvent& e : witness) {
    rows.push_back({e.invoke_s, e.id, "node " + std::to_string(e.node), e.key, e.cost,
                    e.steps.size() > 1 ? e.steps : std::vector<WitnessStep>{},
                    e.complete_s ? e.outcome : kNeverAnswered});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RequestRow& a, const RequestRow& b) {
    return a.sent_s != b.sent_s ? a.sent_s < b.sent_s : a.id < b.id;
  });
  return rows;
}

}  // namespace ratelab
