#include "model/history.h"

#include <gtest/gtest.h>

#include "testing/time.h"

namespace ratelab {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// A request sent at 0, its script refused (NOSCRIPT) at 2ms and run at 5ms, answered at 7ms.
HistoryEvent ScriptRequest() {
  HistoryEvent e;
  e.key = "u";
  e.invoke = kT0;
  e.steps.push_back({"EVALSHA", kT0 + milliseconds(2)});
  e.steps.push_back({"EVAL", kT0 + milliseconds(5) + microseconds(300)});
  e.apply = e.steps.back().at;
  e.complete = kT0 + milliseconds(7);
  e.decision = Decision{true, 0, 0, {}, {}};
  return e;
}

TEST(AsDecided, OnTheClientsClockARequestIsJudgedWhenItWasSent) {
  const History h = AsDecided({ScriptRequest()}, DecisionClock::kClient, Duration(1));
  EXPECT_EQ(h[0].invoke, kT0);
}

TEST(AsDecided, OnTheStoresClockARequestIsJudgedWhenTheStoreRanIt) {
  const History h = AsDecided({ScriptRequest()}, DecisionClock::kStore, Duration(1));
  EXPECT_EQ(h[0].invoke, kT0 + milliseconds(5) + microseconds(300)) << "its last step";
  EXPECT_EQ(h[0].complete, kT0 + milliseconds(7));
  // And at the store's resolution.
  EXPECT_EQ(AsDecided({ScriptRequest()}, DecisionClock::kStore, milliseconds(1))[0].invoke,
            kT0 + milliseconds(5));
}

TEST(AsDecided, ARequestThatNeverReachedTheStoreKeepsItsSendingTime) {
  HistoryEvent lost;
  lost.key = "u";
  lost.invoke = kT0 + milliseconds(3);
  EXPECT_EQ(AsDecided({lost}, DecisionClock::kStore, Duration(1))[0].invoke, kT0 + milliseconds(3));
}

}  // namespace
}  // namespace ratelab
