#include "reports/timeline.h"

#include <algorithm>
#include <limits>

namespace ratelab {

namespace {

using json = nlohmann::json;

double Seconds(Instant t, Instant start) { return static_cast<double>((t - start).count()) / 1e9; }
std::string Str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

nlohmann::json EventJson(const HistoryEvent& e, Instant start) {
  std::string outcome = "no answer";
  if (e.decision) {
    outcome = e.decision->allowed
                  ? "admitted"
                  : "denied, retry after " + FormatDuration(e.decision->retry_after);
  }
  nlohmann::json steps = nlohmann::json::array();
  for (const StepRecord& s : e.steps)
    steps.push_back({{"label", s.label}, {"at_s", Seconds(s.at, start)}});
  return {
      {"id", e.id},
      {"key", e.key},
      {"node", e.node},
      {"cost", e.cost},
      {"at", FormatInstant(e.apply)},
      {"outcome", outcome},
      {"invoke_s", Seconds(e.invoke, start)},
      {"complete_s", e.decision ? nlohmann::json(Seconds(e.complete, start)) : nlohmann::json()},
      {"steps", steps}};
}

}  // namespace

json WitnessJson(const std::vector<HistoryEvent>& events, Instant start) {
  json out = json::array();
  for (const HistoryEvent& e : events) out.push_back(EventJson(e, start));
  return out;
}

json FaultsJson(const std::vector<FaultWindow>& faults, Instant start) {
  json out = json::array();
  for (const FaultWindow& f : faults) {
    out.push_back(
        {{"what", f.what}, {"from_s", Seconds(f.from, start)}, {"to_s", Seconds(f.to, start)}});
  }
  return out;
}

std::vector<TimelineRow> WitnessTimeline(const json& witness, const json& faults) {
  std::vector<TimelineRow> rows;
  const double kInf = std::numeric_limits<double>::infinity();
  double first = kInf, last = -kInf;
  double lost_after = kInf;  // the earliest last step of a request never answered
  for (const json& e : witness) {
    const int64_t id = e["id"].get<int64_t>();
    const std::string node = "node " + Str(e["node"]);
    const double sent = e["invoke_s"].get<double>();
    rows.push_back(
        {sent, id, 0, node, "sent (" + Str(e["key"]) + ", cost " + Str(e["cost"]) + ")"});
    int order = 1;
    double end = sent;
    for (const json& s : e["steps"]) {
      end = s["at_s"].get<double>();
      rows.push_back({end, id, order++, node, "step: " + Str(s["label"])});
    }
    if (!e["complete_s"].is_null()) {
      end = e["complete_s"].get<double>();
      rows.push_back({end, id, order, node, Str(e["outcome"])});
    } else {
      rows.push_back({end, id, order, node, "never answered (a crash, or the store failed)"});
      lost_after = std::min(lost_after, end);
    }
    first = std::min(first, sent);
    last = std::max(last, end);
  }
  if (faults.is_array()) {
    // A request that got no answer was cut off by something after its last step: the first
    // fault after it is shown too.
    double cut = kInf;
    for (const json& f : faults) {
      const double from = f["from_s"].get<double>();
      if (from >= lost_after) cut = std::min(cut, from);
    }
    for (const json& f : faults) {
      const double from = f["from_s"].get<double>(), to = f["to_s"].get<double>();
      if ((to < first || from > last) && from != cut) continue;  // nowhere near the witness
      if (from == to) {
        rows.push_back({from, -1, 0, "", "fault: " + Str(f["what"])});
      } else {
        rows.push_back({from, -1, 0, "", "fault begins: " + Str(f["what"])});
        rows.push_back({to, -1, 0, "", "fault ends: " + Str(f["what"])});
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TimelineRow& a, const TimelineRow& b) {
    if (a.at_s != b.at_s) return a.at_s < b.at_s;
    return a.id != b.id ? a.id < b.id : a.order < b.order;
  });
  return rows;
}

}  // namespace ratelab
