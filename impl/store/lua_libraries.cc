#include "impl/store/lua_libraries.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "impl/store/lua_libraries_internal.h"

namespace ratelab {
namespace {

// cjson ----------------------------------------------------------------------------------------

constexpr int kMostNesting = 1000;  // lua-cjson's default, for encoding and decoding

// A number as lua-cjson writes it ("%.14g"), or an error for NaN and infinity.
bool AppendNumber(lua_State* L, double n, std::string& out) {
  if (std::isnan(n) || std::isinf(n)) {
    luaL_error(L, "Cannot serialise number: must not be NaN or Inf");
    return false;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.14g", n);
  out += buf;
  return true;
}

void AppendString(lua_State* L, int index, std::string& out) {
  size_t n = 0;
  const char* s = lua_tolstring(L, index, &n);
  out += '"';
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '/':
        out += "\\/";
        break;  // lua-cjson escapes it
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// The length of the table at `index` if it is an array (keys 1..n, not too sparse, as lua-cjson
// judges: n above 10 and above twice the count is "excessively sparse"), 0 for an object or an
// empty table, -1 when it is too sparse.
int ArrayLength(lua_State* L, int index) {
  int64_t max = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      const double k = lua_tonumber(L, -1);
      if (std::floor(k) == k && k >= 1) {
        max = std::max<int64_t>(max, static_cast<int64_t>(k));
        ++count;
        continue;
      }
    }
    lua_pop(L, 1);
    return 0;
  }
  if (max > 10 && max > 2 * count) return -1;
  return static_cast<int>(max);
}

void Encode(lua_State* L, int index, int depth, std::string& out) {
  switch (lua_type(L, index)) {
    case LUA_TNIL:
      out += "null";
      return;
    case LUA_TBOOLEAN:
      out += lua_toboolean(L, index) ? "true" : "false";
      return;
    case LUA_TNUMBER:
      AppendNumber(L, lua_tonumber(L, index), out);
      return;
    case LUA_TSTRING:
      AppendString(L, index, out);
      return;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, index) == nullptr) {
        out += "null";
        return;
      }
      break;
    case LUA_TTABLE: {
      if (depth >= kMostNesting) {
        luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth + 1);
        return;
      }
      luaL_checkstack(L, 3, "cjson");
      const int length = ArrayLength(L, index);
      if (length < 0) {
        luaL_error(L, "Cannot serialise table: excessively sparse array");
        return;
      }
      if (length > 0) {
        out += '[';
        for (int i = 1; i <= length; ++i) {
          if (i > 1) out += ',';
          lua_rawgeti(L, index, i);
          Encode(L, lua_gettop(L), depth + 1, out);
          lua_pop(L, 1);
        }
        out += ']';
        return;
      }
      out += '{';
      bool first = true;
      lua_pushnil(L);
      while (lua_next(L, index) != 0) {
        if (!first) out += ',';
        first = false;
        const int key = lua_gettop(L) - 1;
        if (lua_type(L, key) == LUA_TSTRING) {
          AppendString(L, key, out);
        } else if (lua_type(L, key) == LUA_TNUMBER) {
          out += '"';
          AppendNumber(L, lua_tonumber(L, key), out);
          out += '"';
        } else {
          luaL_error(L, "Cannot serialise table: table key must be a number or string");
          return;
        }
        out += ':';
        Encode(L, lua_gettop(L), depth + 1, out);
        lua_pop(L, 1);
      }
      out += '}';
      return;
    }
    default:
      break;
  }
  luaL_error(L, "Cannot serialise %s: type not supported", luaL_typename(L, index));
}

int CjsonEncode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  std::string out;
  Encode(L, 1, 0, out);
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// Pushes `j` as lua-cjson decodes it: tables made empty and filled in the document's order, so
// that Lua iterates them as it does in Redis.
void Push(lua_State* L, const nlohmann::ordered_json& j, int depth) {
  if (depth > kMostNesting) {
    luaL_error(L, "Found too many nested data structures (%d) at character 1", depth);
    return;
  }
  luaL_checkstack(L, 3, "cjson");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      lua_pushlightuserdata(L, nullptr);
      return;
    case nlohmann::ordered_json::value_t::boolean:
      lua_pushboolean(L, j.get<bool>());
      return;
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
    case nlohmann::ordered_json::value_t::number_float:
      lua_pushnumber(L, j.get<double>());
      return;
    case nlohmann::ordered_json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      return;
    }
    case nlohmann::ordered_json::value_t::array: {
      lua_newtable(L);
      int i = 0;
      for (const nlohmann::ordered_json& e : j) {
        Push(L, e, depth + 1);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
    case nlohmann::ordered_json::value_t::object:
      lua_newtable(L);
      for (const auto& [k, v] : j.items()) {
        lua_pushlstring(L, k.data(), k.size());
        Push(L, v, depth + 1);
        lua_rawset(L, -3);
      }
      return;
    default:
      lua_pushnil(L);
  }
}

int CjsonDecode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  nlohmann::ordered_json j;
  std::string error;
  try {
    j = nlohmann::ordered_json::parse(std::string_view(s, n));
  } catch (const nlohmann::ordered_json::parse_error& e) {
    error = "Expected value but found invalid token at character " +
            std::to_string(e.byte == 0 ? 1 : e.byte);
  }
  if (!error.empty()) return luaL_error(L, "%s", error.c_str());
  Push(L, j, 1);
  return 1;
}

// bit (LuaBitOp) ------------------------------------------------------------------------------

// A number as LuaBitOp takes it: rounded and wrapped to 32 bits (its 2^52 + 2^51 trick).
uint32_t Bits(lua_State* L, int index) {
  const double n = luaL_checknumber(L, index) + 6755399441055744.0;
  uint64_t raw = 0;
  std::memcpy(&raw, &n, sizeof raw);
  return static_cast<uint32_t>(raw);
}
int PushBits(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<double>(static_cast<int32_t>(b)));
  return 1;
}

int BitToBit(lua_State* L) { return PushBits(L, Bits(L, 1)); }
int BitNot(lua_State* L) { return PushBits(L, ~Bits(L, 1)); }
template <typename Op>
int Fold(lua_State* L, Op op) {
  uint32_t b = Bits(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b = op(b, Bits(L, i));
  return PushBits(L, b);
}
int BitAnd(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a & b; });
}
int BitOr(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a | b; });
}
int BitXor(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a ^ b; });
}
int BitLShift(lua_State* L) { return PushBits(L, Bits(L, 1) << (Bits(L, 2) & 31)); }
int BitRShift(lua_State* L) { return PushBits(L, Bits(L, 1) >> (Bits(L, 2) & 31)); }
int BitArShift(lua_State* L) {
  return PushBits(L, static_cast<uint32_t>(static_cast<int32_t>(Bits(L, 1)) >> (Bits(L, 2) & 31)));
}
int BitRol(lua_State* L) {
  const uint32_t b = Bits(L, 1), n = Bits(L, 2) & 31;
  return PushBits(L, (b << n) | (b >> ((32 - n) & 31)));
}
int BitRor(lua_State* L) {
  const uint32_t b = Bits(L, 1), n = Bits(L, 2) & 31;
  return PushBits(L, (b >> n) | (b << ((32 - n) & 31)));
}
int BitSwap(lua_State* L) { return PushBits(L, __builtin_bswap32(Bits(L, 1))); }
int BitToHex(lua_State* L) {
  uint32_t b = Bits(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(Bits(L, 2));
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n - 1; i >= 0; --i) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace

namespace internal {
void SetLibrary(lua_State* L, const char* name, std::initializer_list<luaL_Reg> functions) {
  lua_newtable(L);
  for (const luaL_Reg& f : functions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  lua_setglobal(L, name);
}
}  // namespace internal

void OpenRedisLuaLibraries(lua_State* L) {
  using internal::SetLibrary;
  SetLibrary(L, "cjson", {{"encode", CjsonEncode}, {"decode", CjsonDecode}});
  lua_getglobal(L, "cjson");
  lua_pushlightuserdata(L, nullptr);  // cjson.null: JSON's null, as decode gives it
  lua_setfield(L, -2, "null");
  lua_pop(L, 1);
  SetLibrary(L, "bit",
             {{"tobit", BitToBit},
              {"bnot", BitNot},
              {"band", BitAnd},
              {"bor", BitOr},
              {"bxor", BitXor},
              {"lshift", BitLShift},
              {"rshift", BitRShift},
              {"arshift", BitArShift},
              {"rol", BitRol},
              {"ror", BitRor},
              {"bswap", BitSwap},
              {"tohex", BitToHex}});
  internal::OpenCmsgpack(L);
  internal::OpenStruct(L);
}

}  // namespace ratelab
