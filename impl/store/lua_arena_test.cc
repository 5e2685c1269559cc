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

// After Restore the arena holds what it held at Keep: each block at its address with its bytes,
// the same count, and new blocks never overlap those; blocks kept and then written over, freed
// or moved by the state come back too. Three rounds, each freeing, moving and adding blocks of
// every size.
TEST(LuaArena, RestoreBringsBackWhatWasHeldAtKeep) {
  LuaArena arena(size_t{1} << 30);
  std::mt19937 draw(11);
  std::map<unsigned char*, std::pair<size_t, unsigned char>> held;  // block: size, fill
  const auto size_drawn = [&] { return draw() % 4 == 0 ? 1 + draw() % 4000 : 1 + draw() % 600; };
  const auto add = [&] {
    const size_t size = size_drawn();
    auto* p = static_cast<unsigned char*>(LuaArena::Allocate(&arena, nullptr, 0, size));
    ASSERT_NE(p, nullptr);
    const auto fill = static_cast<unsigned char>(draw());
    std::memset(p, fill, size);
    held[p] = {size, fill};
  };
  const auto churn = [&](int steps) {
    for (int step = 0; step < steps; ++step) {
      if (held.empty() || draw() % 3 == 0) {
        add();
        continue;
      }
      auto it = held.begin();
      std::advance(it, draw() % held.size());
      const auto [p, h] = *it;
      held.erase(it);
      if (const int what = static_cast<int>(draw() % 3); what == 0) {  // written over in place
        const auto fill = static_cast<unsigned char>(draw());
        std::memset(p, fill, h.first);
        held[p] = {h.first, fill};
      } else if (what == 1) {
        LuaArena::Allocate(&arena, p, h.first, 0);
      } else {
        const size_t size = size_drawn();
        auto* q = static_cast<unsigned char*>(LuaArena::Allocate(&arena, p, h.first, size));
        ASSERT_NE(q, nullptr);
        std::memset(q, h.second, size);
        held[q] = {size, h.second};
      }
    }
  };
  for (int i = 0; i < 300; ++i) add();
  churn(2000);
  arena.Keep();
  const auto kept = held;
  const size_t used = arena.used();
  for (int round = 0; round < 3; ++round) {
    churn(3000);
    arena.Restore();
    EXPECT_EQ(arena.used(), used) << "round " << round;
    held = kept;
    for (const auto& [p, h] : held) {
      for (size_t i = 0; i < h.first; ++i) ASSERT_EQ(p[i], h.second) << "round " << round;
    }
    churn(500);  // what comes after lands beside the kept blocks, not on them
    unsigned char* end = nullptr;
    for (const auto& [p, h] : held) {
      ASSERT_TRUE(end == nullptr || p >= end) << "round " << round;
      end = p + h.first;
      for (size_t i = 0; i < h.first; ++i) ASSERT_EQ(p[i], h.second) << "round " << round;
    }
    held = kept;
    arena.Restore();
  }
  for (const auto& [p, h] : held) LuaArena::Allocate(&arena, p, h.first, 0);
  EXPECT_EQ(arena.used(), 0u);
}

}  // namespace
}  // namespace ratelab
