#include "impl/store/lua_arena.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

namespace ratelab {
namespace {

// Blocks of every size, grown, shrunk and freed in a drawn order, keep their bytes and never
// overlap; the arena counts what is held.
TEST(LuaArena, BlocksKeepTheirBytesAndNeverOverlap) {
  LuaArena arena(size_t{1} << 30);
  std::mt19937 draw(7);
  struct Held {
    size_t size;
    unsigned char fill;
  };
  std::map<unsigned char*, Held> held;
  size_t total = 0;
  const auto check = [&](unsigned char* p, const Held& h) {
    for (size_t i = 0; i < h.size; ++i) ASSERT_EQ(p[i], h.fill) << "at byte " << i;
  };
  for (int step = 0; step < 20000; ++step) {
    const int what = static_cast<int>(draw() % 3);
    const size_t size = draw() % 4 == 0 ? 1 + draw() % 4000 : 1 + draw() % 600;
    if (what == 0 || held.empty()) {
      auto* p = static_cast<unsigned char*>(LuaArena::Allocate(&arena, nullptr, 0, size));
      ASSERT_NE(p, nullptr);
      const auto fill = static_cast<unsigned char>(draw());
      std::memset(p, fill, size);
      held[p] = {size, fill};
      total += size;
    } else {
      auto it = held.begin();
      std::advance(it, draw() % held.size());
      unsigned char* p = it->first;
      const Held h = it->second;
      check(p, h);
      held.erase(it);
      total -= h.size;
      if (what == 1) {
        ASSERT_EQ(LuaArena::Allocate(&arena, p, h.size, 0), nullptr);
      } else {
        auto* q = static_cast<unsigned char*>(LuaArena::Allocate(&arena, p, h.size, size));
        ASSERT_NE(q, nullptr);
        check(q, {std::min(h.size, size), h.fill});
        std::memset(q, h.fill, size);
        held[q] = {size, h.fill};
        total += size;
      }
    }
    ASSERT_EQ(arena.used(), total);
  }
  // No two held blocks overlap.
  unsigned char* end = nullptr;
  for (const auto& [p, h] : held) {
    ASSERT_TRUE(end == nullptr || p >= end);
    end = p + h.size;
    check(p, h);
  }
  for (const auto& [p, h] : held) LuaArena::Allocate(&arena, p, h.size, 0);
  EXPECT_EQ(arena.used(), 0u);
}

TEST(LuaArena, RefusesToGrowPastItsCapOnlyWhenEnforced) {
  LuaArena arena(1000);
  void* p = LuaArena::Allocate(&arena, nullptr, 0, 800);
  ASSERT_NE(p, nullptr);
  arena.enforce = true;
  EXPECT_EQ(LuaArena::Allocate(&arena, nullptr, 0, 300), nullptr);
  EXPECT_EQ(LuaArena::Allocate(&arena, p, 800, 1200), nullptr);
  EXPECT_EQ(arena.used(), 800u);
  void* shrunk = LuaArena::Allocate(&arena, p, 800, 100);  // shrinking is never refused
  ASSERT_NE(shrunk, nullptr);
  EXPECT_EQ(arena.used(), 100u);
  arena.enforce = false;
  void* big = LuaArena::Allocate(&arena, nullptr, 0, 5000);
  ASSERT_NE(big, nullptr);
  LuaArena::Allocate(&arena, big, 5000, 0);
  LuaArena::Allocate(&arena, shrunk, 100, 0);
  EXPECT_EQ(arena.used(), 0u);
}

}  // namespace
}  // namespace ratelab
