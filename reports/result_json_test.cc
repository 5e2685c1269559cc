#include "reports/result_json.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

TEST(ResultJson, CarriesTheSeedHashAndEveryLimitersNumbers) {
  Result<Comparison> c = RunScenario(DemoScenario(), 4);
  ASSERT_TRUE(c.ok());
  const nlohmann::json j = ResultJson(*c);
  EXPECT_EQ(j["seed"], 4);
  EXPECT_EQ(j["history_hash"], HexHash(c->history_hash()));
  ASSERT_EQ(j["limiters"].size(), c->limiters.size());
  for (size_t i = 0; i < c->limiters.size(); ++i) {
    const LimiterOutcome& o = c->limiters[i];
    const nlohmann::json& l = j["limiters"][i];
    // Recounted from the history, not copied from the outcome's counters.
    int64_t admitted = 0, denied = 0;
    for (const HistoryEvent& e : o.history) {
      admitted += e.admitted();
      denied += e.denied();
    }
    EXPECT_EQ(l["admitted"], admitted);
    EXPECT_EQ(l["denied"], denied);
    EXPECT_EQ(l["max_in_any_window"], o.max_in_any_window);
    EXPECT_EQ(l["violations"].size(), static_cast<size_t>(o.violation_count()));
  }
  const nlohmann::json& fw = j["limiters"][0];
  ASSERT_EQ(fw["protocol"], "memory-fixed-window");
  ASSERT_FALSE(fw["violations"].empty());
  EXPECT_EQ(fw["violations"][0]["invariant"], "any-window-cap");
  EXPECT_EQ(fw["violations"][0]["witness"].size(), 6u);
  EXPECT_EQ(fw["violations"][0]["witness"][0]["outcome"], "admitted");
}

TEST(ResultJson, HashIsSixteenHexDigits) { EXPECT_EQ(HexHash(0xabc), "0000000000000abc"); }

}  // namespace
}  // namespace ratelab
