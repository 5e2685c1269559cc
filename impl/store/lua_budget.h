// What a script may run, in steps: the instructions the Lua VM executes, and the steps of the
// library functions that loop in C (pattern matching, load's reader), which no instruction
// counts. One budget a script, kept by LuaScripting and reached from the state's registry.
//
// Its end cannot be caught: once the budget is spent, the step that spent it raises the budget's
// error, and from then on every instruction of every coroutine raises it again, so a pcall (or a
// coroutine.resume) that catches it returns into code whose first instruction raises it once
// more, until the script itself ends with it (as Redis's script kill raises on every line).
#ifndef RATELAB_IMPL_STORE_LUA_BUDGET_H_
#define RATELAB_IMPL_STORE_LUA_BUDGET_H_

#include <atomic>
#include <cstdint>

struct lua_State;

namespace ratelab {

struct LuaBudget {
  int64_t total = 0;  // what the script was given
  int64_t left = 0;   // what is left; past 0, spent
  // Once set (a user's Ctrl-C or SIGTERM), a running script ends at its next look at the budget,
  // as one past its budget does, saying so; none: never.
  const std::atomic<int>* stop = nullptr;
  bool stopped = false;  // it ended so
};

// Has `L`'s scripts take from `budget` (which outlives the state).
void RegisterLuaBudget(lua_State* L, LuaBudget* budget);
// Starts a script with `total` steps, counting the main thread's instructions (coroutines it
// makes inherit the count).
void StartLuaBudget(lua_State* L, int64_t total);
// Stops counting (between scripts).
void StopLuaBudget(lua_State* L);
// Takes `steps` from the running script's budget: past its end, raises the budget's error. For
// library functions that loop in C.
void ChargeLuaBudget(lua_State* L, int64_t steps);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_BUDGET_H_
