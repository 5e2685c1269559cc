// The Lua libraries Redis gives scripts beside `redis`, for MemoryKv's scripting: `cjson` (the
// lua-cjson 2.1 that Redis bundles: encode and decode, cjson.null) and `bit` (LuaBitOp 1.0:
// band, bor, bxor, bnot, lshift, rshift, arshift, rol, ror, tobit, tohex, bswap; tohex with
// Redis's fix of CVE-2024-31449), `cmsgpack`
// (lua-cmsgpack 0.4, in lua_cmsgpack.cc) and `struct` (struct 0.2, in lua_struct.cc). Their
// answers are Redis's, shown by the equivalence property (property-tests/kv_equivalence_test.cc),
// and so are the encoding errors. Decoding reads strict JSON: lua-cjson also takes numbers such
// as "+2", "0x10" or "inf", and its errors name the token found ("found T_END"), where MemoryKv's
// say "found invalid token"; both name the character. cjson's settings answer lua-cjson's
// defaults, which MemoryKv keeps: a script that asks for another is told so.
#ifndef RATELAB_IMPL_STORE_LUA_LIBRARIES_H_
#define RATELAB_IMPL_STORE_LUA_LIBRARIES_H_

struct lua_State;

namespace ratelab {

// Sets the globals `cjson`, `bit`, `cmsgpack` and `struct` in `L`, and `tonumber`: Lua's,
// answering as it does, reading a whole number in less time.
void OpenRedisLuaLibraries(lua_State* L);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_LIBRARIES_H_
