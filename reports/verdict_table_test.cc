#include "reports/verdict_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

namespace ratelab {
namespace {

TEST(VerdictTable, HasAHeaderAndOneAlignedRowPerLimiter) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok());
  const std::string table = RenderVerdictTable(*c);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 6);
  EXPECT_NE(table.find("max in any 1m"), std::string::npos);
  // The fixed window row: promise kept, yet twice the limit in some minute.
  const size_t row = table.find("memory-fixed-window");
  ASSERT_NE(row, std::string::npos);
  const std::string line = table.substr(row, table.find('\n', row) - row);
  EXPECT_TRUE(std::regex_search(line, std::regex(" 10 +2\\.00 +kept +broken for [0-9]+ keys")))
      << line;
}

TEST(VerdictTable, WitnessesNameTheLimiterAndTheEvents) {
  Result<RunResult> c = RunScenario(DemoScenario(), 1);
  ASSERT_TRUE(c.ok());
  const std::string w = RenderWitnesses(*c);
  EXPECT_NE(w.find("memory-fixed-window: [any-window-cap] 6 admitted in"), std::string::npos) << w;
  EXPECT_EQ(w.find("memory-sliding-log"), std::string::npos) << "the sliding log broke nothing";
}

}  // namespace
}  // namespace ratelab
