#include "reports/timeline.h"

#include <gtest/gtest.h>

#include "reports/run_report.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;

const Instant kStart = FromUnixNanos(0) + std::chrono::hours(12);

HistoryEvent Request(int64_t id, Duration sent, std::vector<Duration> steps,
                     std::optional<Duration> answered) {
  HistoryEvent e;
  e.id = id;
  e.key = "user:u1:/api";
  e.node = static_cast<int>(id);
  e.invoke = kStart + sent;
  for (Duration s : steps) e.steps.push_back({"INCR k", kStart + s});
  if (answered) {
    e.complete = kStart + *answered;
    e.decision = Decision{true, 1, 0, {}, {}};
  }
  return e;
}

std::vector<std::string> Lines(const std::vector<TimelineRow>& rows) {
  std::vector<std::string> out;
  for (const TimelineRow& r : rows) {
    out.push_back((r.id < 0 ? std::string("-") : "#" + std::to_string(r.id)) + " " + r.what);
  }
  return out;
}

TEST(WitnessTimeline, InterleavesRequestsAndTheFaultsThatTouchThem) {
  const std::vector<HistoryEvent> witness = {
      Request(0, milliseconds(0), {milliseconds(2)}, milliseconds(4)),
      Request(1, milliseconds(1), {milliseconds(3)}, std::nullopt)};
  const std::vector<FaultWindow> faults = {
      {"the store was unreachable", kStart + milliseconds(2), kStart + milliseconds(10)},
      {"node 1 crashed", kStart + milliseconds(6), kStart + milliseconds(50)},
      {"node 0's clock jumped", kStart + milliseconds(80), kStart + milliseconds(80)},
      {"long before", kStart - milliseconds(90), kStart - milliseconds(50)}};
  const std::vector<TimelineRow> rows =
      WitnessTimeline(WitnessEvents(witness, kStart), FaultReports(faults, kStart));
  EXPECT_EQ(Lines(rows), (std::vector<std::string>{
                             "#0 sent (user:u1:/api, cost 1)",
                             "#1 sent (user:u1:/api, cost 1)",
                             "- fault begins: the store was unreachable",
                             "#0 step: INCR k",
                             "#1 step: INCR k",
                             "#1 never answered (a crash, or the store failed)",
                             "#0 admitted",
                             "- fault begins: node 1 crashed",
                             "- fault ends: the store was unreachable",
                             "- fault ends: node 1 crashed",
                         }))
      << "the outage overlaps; the crash is the first fault after the unanswered request; the "
         "clock jump and the early fault are elsewhere";
  EXPECT_DOUBLE_EQ(rows.front().at_s, 0.0);
  EXPECT_EQ(rows.front().node, "node 0");
}

TEST(WitnessRequests, OneRowPerRequestWithItsStepsOnlyWhenItTookSeveral) {
  const std::vector<HistoryEvent> witness = {
      Request(0, milliseconds(0), {milliseconds(2), milliseconds(3)}, milliseconds(4)),
      Request(1, milliseconds(1), {milliseconds(3)}, milliseconds(5)),
      Request(2, milliseconds(7), {milliseconds(8)}, std::nullopt)};
  const std::vector<FaultWindow> faults = {
      {"the store was unreachable", kStart + milliseconds(2), kStart + milliseconds(10)}};
  const std::vector<RequestRow> rows =
      WitnessRequests(WitnessEvents(witness, kStart), FaultReports(faults, kStart));
  std::vector<std::string> lines;
  for (const RequestRow& r : rows) {
    lines.push_back((r.id < 0 ? std::string("-") : "#" + std::to_string(r.id)) + " " +
                    std::to_string(r.steps.size()) + " " + r.outcome);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "#0 2 admitted",
                       "#1 0 admitted",
                       "- 0 fault begins: the store was unreachable",
                       "#2 0 never answered (a crash, or the store failed)",
                       "- 0 fault ends: the store was unreachable",
                   }));
  EXPECT_DOUBLE_EQ(rows[1].sent_s, 0.001);
  EXPECT_DOUBLE_EQ(rows[0].steps[1].at_s, 0.003);
  EXPECT_EQ(rows[0].key, "user:u1:/api");
}

}  // namespace
}  // namespace ratelab
