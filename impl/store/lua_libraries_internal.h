// Shared by the files that make the Lua libraries of impl/store/lua_libraries.h.
#ifndef RATELAB_IMPL_STORE_LUA_LIBRARIES_INTERNAL_H_
#define RATELAB_IMPL_STORE_LUA_LIBRARIES_INTERNAL_H_

#include <initializer_list>
#include <lua.hpp>

namespace ratelab::internal {

// Sets the global `name` to a table of `functions`.
void SetLibrary(lua_State* L, const char* name, std::initializer_list<luaL_Reg> functions);

// Sets the global `cmsgpack` (impl/store/lua_cmsgpack.cc).
void OpenCmsgpack(lua_State* L);
// Sets the global `struct` (impl/store/lua_struct.cc).
void OpenStruct(lua_State* L);
// Puts string.find, match, gmatch, gfind, gsub and rep, bounded by the script's budget, in the
// string table (impl/store/lua_patterns.cc).
void OpenBoundedStringLibrary(lua_State* L);

}  // namespace ratelab::internal

#endif  // RATELAB_IMPL_STORE_LUA_LIBRARIES_INTERNAL_H_
