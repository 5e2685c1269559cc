// Redis's `cmsgpack` for scripts (lua-cmsgpack 0.4: pack, unpack, unpack_one, unpack_limit),
// written to the same choices byte for byte: a number that is an integer packs as the smallest
// integer, any other as a float when a float holds it exactly and else a double; a table whose
// keys are exactly 1..n packs as an array, any other as a map (in `next` order); tables deeper
// than 16 pack as nil.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <string>
#include <utility>

#include "impl/store/lua_libraries_internal.h"

namespace ratelab::internal {
namespace {

constexpr int kMostPackNesting = 16;

void PutBigEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

void PackHeader(std::string& out, uint8_t small_tag, uint64_t small_limit, uint8_t tag16,
                uint8_t tag32, uint64_t n) {
  if (n <= small_limit) {
    out += static_cast<char>(small_tag | n);
  } else if (n <= 0xffff) {
    out += static_cast<char>(tag16);
    PutBigEndian(out, n, 2);
  } else {
    out += static_cast<char>(tag32);
    PutBigEndian(out, n, 4);
  }
}

void PackInteger(std::string& out, int64_t n) {
  const auto tagged = [&](uint8_t tag, uint64_t v, int bytes) {
    out += static_cast<char>(tag);
    PutBigEndian(out, v, bytes);
  };
  if (n >= 0) {
    if (n <= 127) {
      out += static_cast<char>(n);
    } else if (n <= 0xff) {
      tagged(0xcc, n, 1);
    } else if (n <= 0xffff) {
      tagged(0xcd, n, 2);
    } else if (n <= 0xffffffffLL) {
      tagged(0xce, n, 4);
    } else {
      tagged(0xcf, n, 8);
    }
  } else if (n >= -32) {
    out += static_cast<char>(static_cast<int8_t>(n));
  } else if (n >= -128) {
    tagged(0xd0, static_cast<uint64_t>(n), 1);
  } else if (n >= -32768) {
    tagged(0xd1, static_cast<uint64_t>(n), 2);
  } else if (n >= -2147483648LL) {
    tagged(0xd2, static_cast<uint64_t>(n), 4);
  } else {
    tagged(0xd3, static_cast<uint64_t>(n), 8);
  }
}

void PackNumber(std::string& out, double d) {
  if (std::isfinite(d) && std::floor(d) == d && d >= -9223372036854775808.0 &&
      d < 9223372036854775808.0) {
    PackInteger(out, static_cast<int64_t>(d));
    return;
  }
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out += static_cast<char>(0xca);
    PutBigEndian(out, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    out += static_cast<char>(0xcb);
    PutBigEndian(out, bits, 8);
  }
}

// Whether the table on top of the stack has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  int64_t count = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return false;
    }
    // A whole number from 1 (lua-cmsgpack's test; one past int64 is none, as its cast makes it
    // on x86-64, and is never cast here). Found by fuzz/lua_script.cc: -1e308 was cast.
    const double k = lua_tonumber(L, -1);
    if (!(k > 0) || k >= 9223372036854775808.0 || std::floor(k) != k) {
      lua_pop(L, 1);
      return false;
    }
    const auto index = static_cast<int64_t>(k);
    ++count;
    max = std::max(max, index);
  }
  return max == count;
}

// Packs the value on top of the stack, and pops it.
void PackTop(lua_State* L, std::string& out, int level) {
  luaL_checkstack(L, 3, "cmsgpack");
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMostPackNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      if (len < 32) {
        out += static_cast<char>(0xa0 | len);
      } else if (len <= 0xff) {
        out += static_cast<char>(0xd9);
        PutBigEndian(out, len, 1);
      } else if (len <= 0xffff) {
        out += static_cast<char>(0xda);
        PutBigEndian(out, len, 2);
      } else {
        out += static_cast<char>(0xdb);
        PutBigEndian(out, len, 4);
      }
      out.append(s, len);
      break;
    }
    case LUA_TBOOLEAN:
      out += static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2);
      break;
    case LUA_TNUMBER:
      PackNumber(out, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE:
      if (IsArray(L)) {
        const size_t n = lua_objlen(L, -1);
        PackHeader(out, 0x90, 15, 0xdc, 0xdd, n);
        for (size_t i = 1; i <= n; ++i) {
          lua_rawgeti(L, -1, static_cast<int>(i));
          PackTop(L, out, level + 1);
        }
      } else {
        uint64_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pop(L, 1);
          ++n;
        }
        PackHeader(out, 0x80, 15, 0xde, 0xdf, n);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pushvalue(L, -2);  // the key, packed (and popped) before its value
          PackTop(L, out, level + 1);
          PackTop(L, out, level + 1);
        }
      }
      break;
    default:
      out += static_cast<char>(0xc0);
      break;
  }
  lua_pop(L, 1);
}

int CmsgpackPack(lua_State* L) {
  const int n = lua_gettop(L);
  if (n == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  std::string out;
  for (int i = 1; i <= n; ++i) {
    lua_pushvalue(L, i);
    PackTop(L, out, 0);
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

// Reads MessagePack from `data`, pushing each value decoded.
class Unpacker {
 public:
  enum class Error { kNone, kMissingBytes, kBadFormat };

  Unpacker(lua_State* L, const char* data, size_t size) : L_(L), p_(data), left_(size) {}

  size_t left() const { return left_; }
  Error error() const { return error_; }

  // Decodes one value and pushes it (nothing on an error).
  void One() {
    const uint8_t tag = Byte();
    if (error_ != Error::kNone) return;
    if (tag <= 0x7f) return lua_pushnumber(L_, tag);
    if (tag >= 0xe0) return lua_pushnumber(L_, static_cast<int8_t>(tag));
    if ((tag & 0xe0) == 0xa0) return String(tag & 0x1f);
    if ((tag & 0xf0) == 0x90) return Array(tag & 0x0f);
    if ((tag & 0xf0) == 0x80) return Map(tag & 0x0f);
    switch (tag) {
      case 0xc0:
        return lua_pushnil(L_);
      case 0xc2:
        return lua_pushboolean(L_, 0);
      case 0xc3:
        return lua_pushboolean(L_, 1);
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf: {
        const uint64_t v = Unsigned(1 << (tag - 0xcc));
        if (error_ == Error::kNone) lua_pushnumber(L_, static_cast<double>(v));
        return;
      }
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3: {
        const int bytes = 1 << (tag - 0xd0);
        uint64_t v = Unsigned(bytes);
        if (error_ != Error::kNone) return;
        if (bytes < 8 && (v >> (8 * bytes - 1)) != 0) v |= ~uint64_t{0} << (8 * bytes);
        return lua_pushnumber(L_, static_cast<double>(static_cast<int64_t>(v)));
      }
      case 0xca: {
        const auto bits = static_cast<uint32_t>(Unsigned(4));
        if (error_ != Error::kNone) return;
        float f;
        std::memcpy(&f, &bits, 4);
        return lua_pushnumber(L_, f);
      }
      case 0xcb: {
        const uint64_t bits = Unsigned(8);
        if (error_ != Error::kNone) return;
        double d;
        std::memcpy(&d, &bits, 8);
        return lua_pushnumber(L_, d);
      }
      case 0xc4:
      case 0xd9:
        return String(Unsigned(1));
      case 0xc5:
      case 0xda:
        return String(Unsigned(2));
      case 0xc6:
      case 0xdb:
        return String(Unsigned(4));
      case 0xdc:
        return Array(Unsigned(2));
      case 0xdd:
        return Array(Unsigned(4));
      case 0xde:
        return Map(Unsigned(2));
      case 0xdf:
        return Map(Unsigned(4));
      default:
        error_ = Error::kBadFormat;
        return;
    }
  }

 private:
  uint8_t Byte() { return static_cast<uint8_t>(Unsigned(1)); }
  uint64_t Unsigned(int bytes) {
    if (error_ != Error::kNone) return 0;
    if (left_ < static_cast<size_t>(bytes)) {
      error_ = Error::kMissingBytes;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p_[i]);
    p_ += bytes;
    left_ -= static_cast<size_t>(bytes);
    return v;
  }
  void String(uint64_t len) {
    if (error_ != Error::kNone) return;
    if (left_ < len) {
      error_ = Error::kMissingBytes;
      return;
    }
    lua_pushlstring(L_, p_, len);
    p_ += len;
    left_ -= len;
  }
  // Room on Lua's stack for a level more (a table and what goes in it), or the error
  // lua-cmsgpack raises when nesting fills the stack.
  void Room(const char* where) {
    if (lua_checkstack(L_, 3) == 0) luaL_error(L_, "stack overflow (%s)", where);
  }
  void Array(uint64_t n) {
    if (error_ != Error::kNone) return;
    lua_newtable(L_);
    Room("in function mp_decode_to_lua_array");
    for (uint64_t i = 1; i <= n; ++i) {
      lua_pushnumber(L_, static_cast<double>(i));  // the index, under the value (as lua-cmsgpack)
      One();
      if (error_ != Error::kNone) return;
      lua_rawset(L_, -3);
    }
  }
  void Map(uint64_t n) {
    if (error_ != Error::kNone) return;
    lua_newtable(L_);
    Room("in function mp_decode_to_lua_hash");
    for (uint64_t i = 0; i < n; ++i) {
      One();  // the key
      if (error_ != Error::kNone) return;
      One();  // the value
      if (error_ != Error::kNone) return;
      lua_settable(L_, -3);
    }
  }

  lua_State* L_;
  const char* p_;
  size_t left_;
  Error error_ = Error::kNone;
};

// lua-cmsgpack's mp_unpack_full: decodes up to `limit` values from argument 1 at `offset`; with
// neither (unpack), every value there is, and only them; else the next offset (-1 at the end)
// comes first, as unpack_one and unpack_limit give it.
int Unpack(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const bool all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {  // (the length where the limit should be, as lua-cmsgpack says)
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  const int base = lua_gettop(L);
  Unpacker u(L, s + offset, len - static_cast<size_t>(offset));
  lua_Integer count = 0;
  while (u.left() > 0 && (all || count < limit)) {
    // (lua-cmsgpack pushes past Lua's stack here; this stops where the stack is full.)
    if (lua_checkstack(L, 3) == 0) luaL_error(L, "stack overflow (in function mp_unpack_full)");
    u.One();
    if (u.error() == Unpacker::Error::kMissingBytes) {
      return luaL_error(L, "Missing bytes in input.");
    }
    if (u.error() == Unpacker::Error::kBadFormat) {
      return luaL_error(L, "Bad data format in input.");
    }
    ++count;
  }
  if (all) return static_cast<int>(count);
  luaL_checkstack(L, 1, "in function mp_unpack_full");
  lua_pushinteger(L, u.left() == 0 ? -1 : static_cast<lua_Integer>(len - u.left()));
  lua_insert(L, base + 1);
  return static_cast<int>(count) + 1;
}

int CmsgpackUnpack(lua_State* L) { return Unpack(L, 0, 0); }
int CmsgpackUnpackOne(lua_State* L) { return Unpack(L, 1, luaL_optinteger(L, 2, 0)); }
int CmsgpackUnpackLimit(lua_State* L) {
  return Unpack(L, luaL_checkinteger(L, 2), luaL_optinteger(L, 3, 0));
}

}  // namespace

void OpenCmsgpack(lua_State* L) {
  SetLibrary(L, "cmsgpack",
             {{"pack", CmsgpackPack},
              {"unpack", CmsgpackUnpack},
              {"unpack_one", CmsgpackUnpackOne},
              {"unpack_limit", CmsgpackUnpackLimit}});
  lua_getglobal(L, "cmsgpack");
  for (const auto& [name, value] :
       {std::pair{"_NAME", "cmsgpack"}, std::pair{"_VERSION", "lua-cmsgpack 0.4.0"},
        std::pair{"_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo"},
        std::pair{"_DESCRIPTION", "MessagePack C implementation for Lua"}}) {
    lua_pushstring(L, value);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
}

}  // namespace ratelab::internal
