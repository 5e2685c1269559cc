#include "impl/store/lua_sandbox.h"

#include <climits>
#include <cstring>
#include <lua.hpp>
#include <string>
#include <string_view>

#include "impl/store/lua_budget.h"
#include "impl/store/lua_libraries_internal.h"

namespace ratelab {
namespace {

constexpr char kGlobalsKey[] = "ratelab.globals";           // the globals scripts see (a stand-in)
constexpr char kGlobalsViewKey[] = "ratelab.globals.view";  // what it reads from
constexpr char kDeclaredField[] = "ratelab.declared";       // in a stand-in's metatable: what
                                                            // getmetatable says it has
constexpr char kReadOnly[] = "Attempt to modify a readonly table";

// The globals Debian's redis-server 7.0.15 gives a script (besides KEYS and ARGV), read off it.
constexpr const char* kGlobals[] = {"_G",       "_VERSION",   "assert",         "bit",
                                    "cjson",    "cmsgpack",   "collectgarbage", "coroutine",
                                    "error",    "gcinfo",     "getmetatable",   "ipairs",
                                    "load",     "loadstring", "math",           "next",
                                    "pairs",    "pcall",      "rawequal",       "rawget",
                                    "rawset",   "redis",      "select",         "setmetatable",
                                    "string",   "struct",     "table",          "tonumber",
                                    "tostring", "type",       "unpack",         "xpcall"};
// The tables among them, each read through a read-only stand-in.
constexpr const char* kLibraries[] = {"bit",   "cjson",  "cmsgpack", "coroutine", "math",
                                      "redis", "string", "struct",   "table"};

// The registry's entry `key` (a constant's address: no string for Lua to intern each run).
void GetRegistry(lua_State* L, const char* key) {
  lua_pushlightuserdata(L, const_cast<char*>(key));
  lua_rawget(L, LUA_REGISTRYINDEX);
}
// Sets it to the value on top, and pops it.
void SetRegistry(lua_State* L, const char* key) {
  lua_pushlightuserdata(L, const_cast<char*>(key));
  lua_insert(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

// Raises the read-only error where a C function refused (no script line: as Redis's).
int RefuseChange(lua_State* L) {
  lua_pushstring(L, kReadOnly);
  return lua_error(L);
}

// __newindex of every stand-in: the assignment's line, then the read-only error.
int ReadOnlyNewIndex(lua_State* L) { return luaL_error(L, "%s", kReadOnly); }

// __index of the globals: a name that is none of them.
int NonexistentGlobal(lua_State* L) {
  if (lua_gettop(L) != 2)
    return luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
  if (!lua_isstring(L, -1) && !lua_isnumber(L, -1)) {
    return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  }
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(L, -1));
}

// Whether the value at `index` is a stand-in: a table whose metatable's __newindex refuses.
bool IsStandIn(lua_State* L, int index) {
  if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return false;
  lua_pushliteral(L, "__newindex");
  lua_rawget(L, -2);  // (raw: a script's own metatable may have one of its own)
  const bool stand_in = lua_tocfunction(L, -1) == ReadOnlyNewIndex;
  lua_pop(L, 2);
  return stand_in;
}

// Replaces the stand-in at `index` (an absolute index) with the table it reads from.
void SeeThrough(lua_State* L, int index) {
  if (!IsStandIn(L, index)) return;
  lua_getmetatable(L, index);
  lua_pushliteral(L, "__index");
  lua_rawget(L, -2);
  lua_replace(L, index);
  lua_pop(L, 1);
}

// Pushes a read-only stand-in for the table at `view` (absolute), whose getmetatable is the
// table at `declared` (absolute; 0: none).
void PushStandIn(lua_State* L, int view, int declared) {
  lua_newtable(L);  // the stand-in, empty for good
  lua_newtable(L);  // its metatable
  lua_pushvalue(L, view);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadOnlyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  if (declared != 0) {
    lua_pushvalue(L, declared);
    lua_setfield(L, -2, kDeclaredField);
  }
  lua_setmetatable(L, -2);
}

// Lua's luaO_chunkid (LUA_IDSIZE 60): how an error names the chunk called `source`.
std::string ChunkId(const char* source) {
  constexpr size_t kIdSize = 60;
  if (*source == '=') return std::string(source + 1).substr(0, kIdSize - 1);
  if (*source == '@') {
    const std::string_view name(source + 1);
    const size_t room = kIdSize - sizeof(" '...' ");
    if (name.size() > room) return "..." + std::string(name.substr(name.size() - room));
    return std::string(name);
  }
  size_t len = std::strcspn(source, "\n\r");
  const size_t room = kIdSize - sizeof(" [string \"...\"] ");
  if (len > room) len = room;
  std::string out = "[string \"";
  if (source[len] != '\0') {
    out.append(source, len);
    out += "...";
  } else {
    out += source;
  }
  return out + "\"]";
}

// Compiles `chunk` as Redis's loadstring and load do: source only (bytecode is a syntax error
// at its first byte, as Redis's parser, which has no undump, reads it), the function made with
// the sandbox's globals. Returns the function, or nil and the message.
int LoadChunk(lua_State* L, std::string_view chunk, const char* name) {
  if (!chunk.empty() && chunk[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(L);
    lua_pushstring(L, (ChunkId(name) + ":1: unexpected symbol near 'char(27)'").c_str());
    return 2;
  }
  if (luaL_loadbuffer(L, chunk.data(), chunk.size(), name) != 0) {
    lua_pushnil(L);
    lua_insert(L, -2);  // nil, message
    return 2;
  }
  SetSandboxGlobals(L);
  return 1;
}

int LoadString(lua_State* L) {
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  const char* name = luaL_optstring(L, 2, s);
  return LoadChunk(L, std::string_view(s, n), name);
}

// load's answer when its reader failed with the error on top: nil and the error, as Redis's
// does, where the reader runs under the script's error handler (lua_load's protected parser
// calls it), which makes a text {err = "ERR " .. text}.
int ReaderFailed(lua_State* L) {
  if (!lua_istable(L, -1)) {
    const int error = lua_gettop(L);
    lua_newtable(L);
    lua_pushliteral(L, "ERR ");
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, error);
    lua_call(L, 1, 1);
    lua_concat(L, 2);
    lua_setfield(L, -2, "err");
    lua_remove(L, error);
  }
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

int Load(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  const char* name = luaL_optstring(L, 2, "=(load)");
  lua_settop(L, 2);
  // The pieces the reader gives, until nil or "", gathered in the state (under its memory cap),
  // each call a step of the budget.
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (true) {
    ChargeLuaBudget(L, 1);
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 0, 1, 0) != 0) return ReaderFailed(L);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) {
      luaL_where(L, 1);
      lua_pushstring(L, "reader function must return a string");
      lua_concat(L, 2);
      return ReaderFailed(L);
    }
    if (lua_objlen(L, -1) == 0) {
      lua_pop(L, 1);
      break;
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t n = 0;
  const char* chunk = lua_tolstring(L, -1, &n);
  return LoadChunk(L, std::string_view(chunk, n), name);
}

// Redis's pcall: an error raised as a table with an `err` text comes back as that text.
int PCall(lua_State* L) {
  const int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);  // the result's place
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int RawGet(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  SeeThrough(L, 1);
  lua_settop(L, 2);
  lua_rawget(L, 1);
  return 1;
}

int RawSet(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsStandIn(L, 1)) return RefuseChange(L);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int Next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  SeeThrough(L, 1);
  lua_settop(L, 2);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

int Pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // Next
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int GetMetatable(lua_State* L) {
  luaL_checkany(L, 1);
  if (IsStandIn(L, 1)) {
    lua_getmetatable(L, 1);
    lua_pushstring(L, kDeclaredField);
    lua_rawget(L, -2);
    return 1;
  }
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  luaL_getmetafield(L, 1, "__metatable");  // a protected metatable says what it says
  return 1;
}

int SetMetatable(lua_State* L) {
  const int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (IsStandIn(L, 1)) return RefuseChange(L);
  if (luaL_getmetafield(L, 1, "__metatable") != 0) {
    return luaL_error(L, "cannot change a protected metatable");
  }
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// Lua 5.1's table.insert, refusing a stand-in where it would write.
int TableInsert(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int e = static_cast<int>(lua_objlen(L, 1)) + 1;  // the first empty place
  int pos = e;
  switch (lua_gettop(L)) {
    case 2:
      break;
    case 3:
      pos = luaL_checkint(L, 2);
      if (pos > e) e = pos;
      if (IsStandIn(L, 1)) return RefuseChange(L);
      for (int i = e; i > pos; i--) {  // move the rest up
        lua_rawgeti(L, 1, i - 1);
        lua_rawseti(L, 1, i);
      }
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  if (IsStandIn(L, 1)) return RefuseChange(L);
  lua_rawseti(L, 1, pos);
  return 0;
}

// Lua 5.1's table.foreach, through a stand-in.
int TableForeach(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  SeeThrough(L, 1);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -3);
    lua_pushvalue(L, -3);
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 2);
  }
  return 0;
}

// The global __redis__err__handler Redis leaves visible: an error as the table it reports.
int ErrorHandler(lua_State* L) {
  lua_settop(L, 1);
  if (lua_istable(L, 1)) return 1;
  lua_newtable(L);
  lua_pushliteral(L, "ERR ");
  lua_getglobal(L, "tostring");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_concat(L, 2);
  lua_setfield(L, 2, "err");
  return 1;
}

// unpack as Redis's Lua has it since the fix of Lua 5.1's own: the count of a range is taken
// without signed overflow, so unpack({}, -2^31, 2^31 - 1) is "too many results" rather than a
// write past the stack (5.1's `e - i + 1` overflowed, and its check for that was compiled away).
int Unpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const int i = luaL_optint(L, 2, 1);
  const int e = luaL_opt(L, luaL_checkint, 3, luaL_getn(L, 1));
  if (i > e) return 0;
  const unsigned count = static_cast<unsigned>(e) - static_cast<unsigned>(i);
  if (count >= static_cast<unsigned>(INT_MAX) || !lua_checkstack(L, static_cast<int>(count + 1))) {
    return luaL_error(L, "too many results to unpack");
  }
  for (unsigned k = 0; k <= count; ++k) {
    lua_rawgeti(L, 1, static_cast<int>(static_cast<unsigned>(i) + k));
  }
  return static_cast<int>(count + 1);
}

void SetFunctionIn(lua_State* L, int table, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, table, name);
}

}  // namespace

void OpenRedisSandbox(lua_State* L) {
  internal::OpenBoundedStringLibrary(L);
  // The base functions that must see through a stand-in, or refuse to change one, and those
  // Redis changes.
  SetFunctionIn(L, LUA_GLOBALSINDEX, "pcall", PCall);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "loadstring", LoadString);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "load", Load);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "rawget", RawGet);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "rawset", RawSet);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "next", Next);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "getmetatable", GetMetatable);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "setmetatable", SetMetatable);
  SetFunctionIn(L, LUA_GLOBALSINDEX, "unpack", Unpack);
  lua_pushcfunction(L, Next);
  lua_pushcclosure(L, Pairs, 1);
  lua_setglobal(L, "pairs");
  lua_getglobal(L, "table");
  const int table = lua_gettop(L);
  SetFunctionIn(L, table, "insert", TableInsert);
  SetFunctionIn(L, table, "foreach", TableForeach);
  lua_pop(L, 1);

  // What scripts read their globals from: Redis's, each library through its stand-in.
  lua_newtable(L);
  const int view = lua_gettop(L);
  for (const char* name : kGlobals) {
    lua_getglobal(L, name);
    lua_setfield(L, view, name);
  }
  lua_pushcfunction(L, ErrorHandler);
  lua_setfield(L, view, "__redis__err__handler");
  for (const char* name : kLibraries) {
    lua_getglobal(L, name);
    PushStandIn(L, lua_gettop(L), 0);
    lua_setfield(L, view, name);
    lua_pop(L, 1);
  }
  // A name that is none of them is an error; getmetatable(_G) says so too (read-only).
  lua_newtable(L);
  const int on_miss = lua_gettop(L);
  lua_pushcfunction(L, NonexistentGlobal);
  lua_setfield(L, on_miss, "__index");
  lua_pushvalue(L, on_miss);
  lua_setmetatable(L, view);
  PushStandIn(L, on_miss, 0);
  const int declared = lua_gettop(L);
  PushStandIn(L, view, declared);  // the globals scripts see
  lua_pushvalue(L, -1);
  lua_setfield(L, view, "_G");
  SetRegistry(L, kGlobalsKey);
  lua_settop(L, view);
  SetRegistry(L, kGlobalsViewKey);
  lua_settop(L, on_miss - 2);

  // The strings' metatable: getmetatable("") is a read-only stand-in whose __index is the
  // string library's stand-in (the metatable itself keeps the library, for speed).
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  const int strings = lua_gettop(L);
  lua_newtable(L);
  GetRegistry(L, kGlobalsViewKey);
  lua_getfield(L, -1, "string");
  lua_setfield(L, -3, "__index");
  lua_pop(L, 1);
  PushStandIn(L, lua_gettop(L), 0);
  lua_setfield(L, strings, "__metatable");
  lua_settop(L, strings - 2);

  // The globals the state itself keeps (what C functions see) lose what Redis has not.
  for (const char* gone : {"print", "getfenv", "setfenv", "newproxy", "dofile", "loadfile",
                           "module", "require", "package", "debug", "os", "io"}) {
    lua_pushnil(L);
    lua_setglobal(L, gone);
  }
}

void SetSandboxGlobals(lua_State* L) {
  GetRegistry(L, kGlobalsKey);
  lua_setfenv(L, -2);
}

void SetSandboxGlobal(lua_State* L, const char* name) {
  GetRegistry(L, kGlobalsViewKey);
  lua_insert(L, -2);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace ratelab
