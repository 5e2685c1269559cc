// DurableSnapshot: a restart keeps what the durability keeps, entry by entry, whatever the
// order in which entries were written over the seconds.
#include "impl/store/durable_snapshot.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ratelab {
namespace {

using Map = std::map<std::string, int>;

// A store of ints that keeps its snapshot as MemoryKv and MemoryDocs do.
struct Store {
  explicit Store(Durability d) : snapshot(d) {}
  void Set(const std::string& key, int value, int64_t now_ms) {
    snapshot.WillChange(data, key, now_ms);
    data[key] = value;
  }
  void Erase(const std::string& key, int64_t now_ms) {
    snapshot.WillChange(data, key, now_ms);
    data.erase(key);
  }
  Map data;
  DurableSnapshot<Map> snapshot;
};

TEST(DurableSnapshot, NoneKeepsNothingAndAlwaysKeepsEverything) {
  for (Durability d : {Durability::kNone, Durability::kAlways}) {
    Store s(d);
    s.Set("a", 1, 1000);
    s.Set("b", 2, 5500);
    s.snapshot.Restart(s.data, 5600);
    EXPECT_EQ(s.data, d == Durability::kNone ? Map{} : (Map{{"a", 1}, {"b", 2}}));
  }
}

TEST(DurableSnapshot, EverySecKeepsTheStateAtTheEndOfTheLastFinishedSecond) {
  Store s(Durability::kEverySec);
  s.Set("a", 1, 1000);
  s.Set("a", 2, 1999);  // second 1 ends with a = 2
  s.Set("b", 1, 2100);  // second 2 is unfinished at the restart
  s.Erase("a", 2200);
  s.Set("b", 2, 2300);
  s.snapshot.Restart(s.data, 2400);
  EXPECT_EQ(s.data, (Map{{"a", 2}}));
}

TEST(DurableSnapshot, EverySecKeepsAnUnfinishedSecondOnceItIsOver) {
  Store s(Durability::kEverySec);
  s.Set("a", 1, 1000);
  s.Set("b", 1, 1500);
  s.snapshot.Restart(s.data, 3000);  // no write since second 1: it is over, and kept
  EXPECT_EQ(s.data, (Map{{"a", 1}, {"b", 1}}));
  // After a restart the snapshot goes on from what survived.
  s.Set("a", 5, 3100);
  s.snapshot.Restart(s.data, 3200);
  EXPECT_EQ(s.data, (Map{{"a", 1}, {"b", 1}}));
  s.Set("c", 7, 3300);
  s.snapshot.Restart(s.data, 4000);
  EXPECT_EQ(s.data, (Map{{"a", 1}, {"b", 1}, {"c", 7}}));
}

}  // namespace
}  // namespace ratelab
