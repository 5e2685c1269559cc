#include "sim/traffic.h"

#include <gtest/gtest.h>

#include <map>

#include "testing/time.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(BoundaryAttackTraffic, PutsHalfBeforeAndHalfAfterTheEdge) {
  std::vector<std::unique_ptr<TrafficGenerator>> g;
  g.push_back(std::make_unique<BoundaryAttackTraffic>("x", kT0 + minutes(1), milliseconds(500), 5));
  const std::vector<Arrival> a = GenerateAll(g, Random(1));
  ASSERT_EQ(a.size(), 10u);
  EXPECT_EQ(a.front().at, kT0 + minutes(1) - milliseconds(500));
  EXPECT_EQ(a[4].at, kT0 + minutes(1) - milliseconds(100));
  EXPECT_EQ(a[5].at, kT0 + minutes(1));
  EXPECT_EQ(a.back().at, kT0 + minutes(1) + milliseconds(400));
}

TEST(ZipfUsersTraffic, IsDeterministicFromTheSeedAndFavoursTheFirstUsers) {
  std::vector<std::unique_ptr<TrafficGenerator>> g;
  g.push_back(std::make_unique<ZipfUsersTraffic>(50, 1.1, kT0, minutes(10), milliseconds(100)));
  const std::vector<Arrival> a = GenerateAll(g, Random(3));
  const std::vector<Arrival> again = GenerateAll(g, Random(3));
  ASSERT_EQ(a.size(), again.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].at, again[i].at);
    ASSERT_EQ(a[i].user, again[i].user);
  }
  EXPECT_NEAR(static_cast<double>(a.size()), 6000, 300);
  std::map<std::string, int> per_user;
  for (const Arrival& x : a) {
    ++per_user[x.user];
    ASSERT_GE(x.at, kT0);
    ASSERT_LT(x.at, kT0 + minutes(10));
  }
  EXPECT_GT(per_user["u1"], 5 * per_user["u20"]);
  EXPECT_NE(GenerateAll(g, Random(4)).size(), 0u);
}

TEST(GenerateAll, MergesGeneratorsInTimeOrder) {
  std::vector<std::unique_ptr<TrafficGenerator>> g;
  g.push_back(std::make_unique<ConstantTraffic>("a", kT0, seconds(2), 3));
  g.push_back(std::make_unique<BurstTraffic>("b", kT0 + seconds(1), 2));
  const std::vector<Arrival> a = GenerateAll(g, Random(1));
  std::string users;
  for (const Arrival& x : a) users += x.user;
  EXPECT_EQ(users, "abbaa");
}

}  // namespace
}  // namespace ratelab
