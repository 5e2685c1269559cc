// The sandbox Redis 7.0 puts scripts in, on Debian's stock Lua 5.1 (whose tables have no
// read-only flag, as the Lua Redis bundles has): what Debian's redis-server 7.0.15 gives a
// script and what it refuses, each held to a real one by property-tests/kv_equivalence_test.cc.
//
// - The globals are Redis's and no others (no print, getfenv, setfenv, newproxy, dofile,
//   loadfile, os, io, debug, package), and reading one that does not exist is an error ("Script
//   attempted to access nonexistent global variable 'x'").
// - The globals, every library table (string, math, table, coroutine, cjson, bit, struct,
//   cmsgpack, redis) and the strings' metatable are read-only: a script that assigns to them, or
//   rawsets, setmetatables or table.inserts into them, fails ("Attempt to modify a readonly
//   table"), so one script cannot change what the next one runs with. KEYS and ARGV are the
//   globals' own, set by each run; the tables they hold are the script's.
// - loadstring and load refuse Lua bytecode as Redis's parser does (CVE-2015-4335: a crafted
//   chunk reads and writes memory): "unexpected symbol near 'char(27)'". A function they make
//   sees the same read-only globals. load's reader is called under the script's budget.
// - pcall answers as Redis's does: an error raised as {err=...} comes back as its text.
//
// It is made of stand-ins the script cannot tell from the tables (a script reads through an
// empty table whose __index is the library; next, pairs, rawget, table.foreach and getmetatable
// see through it), because Debian's Lua has no way to mark a table read-only.
#ifndef RATELAB_IMPL_STORE_LUA_SANDBOX_H_
#define RATELAB_IMPL_STORE_LUA_SANDBOX_H_

struct lua_State;

namespace ratelab {

// Puts `L` (its base, table, string and math libraries, Redis's libraries and the `redis` table
// open) in the sandbox.
void OpenRedisSandbox(lua_State* L);

// Gives the function on top of the stack the sandbox's globals (what each script is compiled
// with).
void SetSandboxGlobals(lua_State* L);

// Sets the global `name` scripts see to the value on top of the stack, and pops it: KEYS and
// ARGV, before each run.
void SetSandboxGlobal(lua_State* L, const char* name);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_SANDBOX_H_
