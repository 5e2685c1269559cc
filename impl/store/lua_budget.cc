#include "impl/store/lua_budget.h"

#include <lua.hpp>

namespace ratelab {
namespace {

constexpr char kBudgetKey[] = "ratelab.budget";
constexpr int kHookEvery = 10'000;  // instructions between two looks at the budget

// (Registry entries are keyed by a constant's address, which asks Lua to intern no string.)
void PushKey(lua_State* L) { lua_pushlightuserdata(L, const_cast<char*>(kBudgetKey)); }

LuaBudget* Budget(lua_State* L) {
  PushKey(L);
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* budget = static_cast<LuaBudget*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return budget;
}

void Hook(lua_State* L, lua_Debug*) {
  LuaBudget* budget = Budget(L);
  // Spent already: this instruction raises again (the count is 1 now).
  ChargeLuaBudget(L, budget != nullptr && budget->left < 0 ? 1 : kHookEvery);
}

}  // namespace

void RegisterLuaBudget(lua_State* L, LuaBudget* budget) {
  PushKey(L);
  lua_pushlightuserdata(L, budget);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

void StartLuaBudget(lua_State* L, int64_t total) {
  if (LuaBudget* budget = Budget(L)) {
    budget->total = budget->left = total;
    budget->stopped = false;
  }
  lua_sethook(L, Hook, LUA_MASKCOUNT, kHookEvery);
}

void StopLuaBudget(lua_State* L) { lua_sethook(L, nullptr, 0, 0); }

void ChargeLuaBudget(lua_State* L, int64_t steps) {
  LuaBudget* budget = Budget(L);
  if (budget == nullptr) return;
  budget->left -= steps;
  if (budget->stop != nullptr && budget->stop->load(std::memory_order_relaxed) != 0) {
    budget->stopped = true;
    budget->left = -1;
  }
  if (budget->left >= 0) return;
  // From now on this thread raises at every instruction: nothing that catches the error can
  // run on.
  lua_sethook(L, Hook, LUA_MASKCOUNT, 1);
  if (budget->stopped) luaL_error(L, "script stopped: the run was interrupted");
  luaL_error(L, "script exceeded its budget of %d instructions (an endless loop?)",
             static_cast<int>(budget->total));
}

}  // namespace ratelab
