#include "sim/demo_scenario.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

const LimiterOutcome& Find(const Comparison& c, const std::string& protocol) {
  for (const LimiterOutcome& o : c.limiters) {
    if (o.protocol == protocol) return o;
  }
  ADD_FAILURE() << "no " << protocol;
  return c.limiters.front();
}

TEST(DemoScenario, FixedWindowKeepsItsPromiseButReachesTwiceTheLimitInSomeWindow) {
  Result<Comparison> c = RunDemoScenario(1);
  ASSERT_TRUE(c.ok()) << c.status();
  const LimiterOutcome& fw = Find(*c, "memory-fixed-window");
  EXPECT_TRUE(fw.promise_violations.empty());
  EXPECT_EQ(fw.max_in_any_window, 2 * c->limit);
  ASSERT_FALSE(fw.any_window_violations.empty());
  EXPECT_EQ(fw.any_window_violations.front().witness.size(), 6u) << "N + 1 events";
}

TEST(DemoScenario, SlidingLogNeverExceedsTheLimitInAnyWindow) {
  Result<Comparison> c = RunDemoScenario(1);
  ASSERT_TRUE(c.ok());
  const LimiterOutcome& sl = Find(*c, "memory-sliding-log");
  EXPECT_EQ(sl.max_in_any_window, c->limit);
  EXPECT_TRUE(sl.any_window_violations.empty());
}

TEST(DemoScenario, EveryLimiterKeepsItsOwnPromiseAndSeesTheSameTraffic) {
  Result<Comparison> c = RunDemoScenario(1);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->limiters.size(), 5u);
  for (const LimiterOutcome& o : c->limiters) {
    EXPECT_TRUE(o.promise_violations.empty()) << o.protocol;
    EXPECT_EQ(o.offered, c->limiters.front().offered);
    EXPECT_EQ(o.admitted + o.denied, o.offered);
    EXPECT_GT(o.denied, 0) << o.protocol << " never denied: the demo shows nothing";
  }
}

TEST(DemoScenario, SameSeedSameOutcomeAndTheSeedMatters) {
  Result<Comparison> a = RunDemoScenario(7);
  Result<Comparison> b = RunDemoScenario(7);
  Result<Comparison> other = RunDemoScenario(8);
  ASSERT_TRUE(a.ok() && b.ok() && other.ok());
  ASSERT_EQ(a->limiters[0].history.size(), b->limiters[0].history.size());
  for (size_t i = 0; i < a->limiters[0].history.size(); ++i) {
    ASSERT_EQ(a->limiters[0].history[i].apply, b->limiters[0].history[i].apply);
    ASSERT_EQ(a->limiters[0].history[i].decision, b->limiters[0].history[i].decision);
  }
  EXPECT_NE(a->limiters[0].history.size(), other->limiters[0].history.size());
}

}  // namespace
}  // namespace ratelab
