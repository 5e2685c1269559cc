#include "impl/store/lua_libraries.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
  // As lua-cjson keeps them: in doubles (found by fuzz/lua_script.cc: a key of 1.5e308 was cast
  // to an integer). An array not too sparse has a length an int holds.
  double max = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, index) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      const double k = lua_tonumber(L, -1);
      if (std::floor(k) == k && k >= 1) {
        max = std::max(max, k);
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

int CjsonDecode(lua_State* L);

// cjson's configuration, as lua-cjson 2.1.0 gives it: each setting asked for answers its value.
// MemoryKv keeps lua-cjson's defaults (what Redis runs with unless a script changes them); a
// script that asks for another is told so, rather than answered as if it took effect.
// encode_keep_buffer changes nothing a script can see, so it is kept as asked (in the state, as
// lua-cjson keeps it until the server restarts).
int RefuseSetting(lua_State* L, const char* name, const char* value) {
  return luaL_error(L,
                    "cjson.%s: ratelab's in-process Redis keeps lua-cjson's default, %s (run the "
                    "script on a real Redis: --store redis)",
                    name, value);
}

int CjsonDepth(lua_State* L, const char* name) {
  if (!lua_isnoneornil(L, 1) && luaL_checknumber(L, 1) != kMostNesting) {
    return RefuseSetting(L, name, "1000");
  }
  lua_pushinteger(L, kMostNesting);
  return 1;
}
int CjsonEncodeMaxDepth(lua_State* L) { return CjsonDepth(L, "encode_max_depth"); }
int CjsonDecodeMaxDepth(lua_State* L) { return CjsonDepth(L, "decode_max_depth"); }

int CjsonEncodeNumberPrecision(lua_State* L) {
  if (!lua_isnoneornil(L, 1)) {
    const lua_Number n = luaL_checknumber(L, 1);
    luaL_argcheck(L, n >= 1 && n <= 14 && n == static_cast<int>(n), 1,
                  "expected integer between 1 and 14");
    if (n != 14) return RefuseSetting(L, "encode_number_precision", "14");
  }
  lua_pushinteger(L, 14);
  return 1;
}

int CjsonEncodeSparseArray(lua_State* L) {
  if ((!lua_isnoneornil(L, 1) && lua_toboolean(L, 1)) ||
      (!lua_isnoneornil(L, 2) && luaL_checknumber(L, 2) != 2) ||
      (!lua_isnoneornil(L, 3) && luaL_checknumber(L, 3) != 10)) {
    return RefuseSetting(L, "encode_sparse_array", "false, 2, 10");
  }
  lua_pushboolean(L, 0);
  lua_pushinteger(L, 2);
  lua_pushinteger(L, 10);
  return 3;
}

// A boolean setting whose value MemoryKv keeps as lua-cjson's default.
int CjsonFixedBoolean(lua_State* L, const char* name, bool value) {
  if (!lua_isnoneornil(L, 1) && (lua_toboolean(L, 1) != 0) != value) {
    return RefuseSetting(L, name, value ? "true" : "false");
  }
  lua_pushboolean(L, value ? 1 : 0);
  return 1;
}
int CjsonEncodeInvalidNumbers(lua_State* L) {
  return CjsonFixedBoolean(L, "encode_invalid_numbers", false);
}
int CjsonDecodeInvalidNumbers(lua_State* L) {
  return CjsonFixedBoolean(L, "decode_invalid_numbers", true);
}

constexpr char kKeepBufferKey[] = "ratelab.cjson.keep_buffer";

int CjsonEncodeKeepBuffer(lua_State* L) {
  if (!lua_isnoneornil(L, 1)) {
    lua_pushboolean(L, lua_toboolean(L, 1));
    lua_setfield(L, LUA_REGISTRYINDEX, kKeepBufferKey);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kKeepBufferKey);
  if (lua_isnil(L, -1)) lua_pushboolean(L, 1);  // lua-cjson's default
  return 1;
}

void PushCjson(lua_State* L);

int CjsonNew(lua_State* L) {
  PushCjson(L);
  return 1;
}

// A table of cjson's functions, as require("cjson") or cjson.new() gives it.
void PushCjson(lua_State* L) {
  lua_newtable(L);
  for (const luaL_Reg& f :
       {luaL_Reg{"encode", CjsonEncode}, luaL_Reg{"decode", CjsonDecode},
        luaL_Reg{"encode_max_depth", CjsonEncodeMaxDepth},
        luaL_Reg{"decode_max_depth", CjsonDecodeMaxDepth},
        luaL_Reg{"encode_number_precision", CjsonEncodeNumberPrecision},
        luaL_Reg{"encode_sparse_array", CjsonEncodeSparseArray},
        luaL_Reg{"encode_invalid_numbers", CjsonEncodeInvalidNumbers},
        luaL_Reg{"decode_invalid_numbers", CjsonDecodeInvalidNumbers},
        luaL_Reg{"encode_keep_buffer", CjsonEncodeKeepBuffer}, luaL_Reg{"new", CjsonNew}}) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  lua_pushlightuserdata(L, nullptr);  // cjson.null: JSON's null, as decode gives it
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

// Where lua-cjson stops on JSON nested past kMostNesting: the 1-based character at which the
// containers open reach one more.
size_t TooDeepAt(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMostNesting) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return text.size();
}

// Decodes JSON straight onto Lua's stack as lua-cjson does (tables made empty and filled in the
// document's order, so that Lua iterates them as it does in Redis; null as cjson.null): every
// byte of what it makes is the Lua state's, under its memory cap, and it stops at the nesting
// lua-cjson stops at, before making anything deeper.
class LuaJsonReader {
 public:
  explicit LuaJsonReader(lua_State* L) : L_(L) {}

  // Why the JSON could not be read, if it could not.
  const std::string& error() const { return error_; }
  bool too_deep() const { return too_deep_; }

  bool null() {
    return Value([&] { lua_pushlightuserdata(L_, nullptr); });
  }
  bool boolean(bool b) {
    return Value([&] { lua_pushboolean(L_, b ? 1 : 0); });
  }
  bool number_integer(int64_t n) {
    return Value([&] { lua_pushnumber(L_, static_cast<double>(n)); });
  }
  bool number_unsigned(uint64_t n) {
    return Value([&] { lua_pushnumber(L_, static_cast<double>(n)); });
  }
  bool number_float(double n, const std::string&) {
    return Value([&] { lua_pushnumber(L_, n); });
  }
  bool string(std::string& text) {
    return Value([&] { lua_pushlstring(L_, text.data(), text.size()); });
  }
  bool binary(nlohmann::ordered_json::binary_t&) { return false; }  // not JSON's
  bool start_object(size_t) { return Open(kObject); }
  bool key(std::string& text) {
    lua_pushlstring(L_, text.data(), text.size());
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return Open(0); }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_ = "Expected value but found invalid token at character " +
             std::to_string(position == 0 ? 1 : position);
    return false;
  }

 private:
  static constexpr int64_t kObject = -1;  // in open_: an object, else the array's length

  // Pushes a value and puts it where it goes: in the array or object open, or alone.
  template <typename PushFn>
  bool Value(PushFn push) {
    push();
    return Place();
  }
  bool Place() {
    if (open_.empty()) return true;
    if (open_.back() == kObject) {
      lua_rawset(L_, -3);  // object, key, value
    } else {
      lua_rawseti(L_, -2, static_cast<int>(++open_.back()));
    }
    return true;
  }
  bool Open(int64_t kind) {
    if (open_.size() >= static_cast<size_t>(kMostNesting)) {
      too_deep_ = true;
      return false;
    }
    luaL_checkstack(L_, 4, "cjson");
    lua_newtable(L_);
    open_.push_back(kind);
    return true;
  }
  bool Close() {
    open_.pop_back();
    return Place();
  }

  lua_State* L_;
  std::vector<int64_t> open_;  // the containers open, outermost first
  std::string error_;
  bool too_deep_ = false;
};

int CjsonDecode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  const std::string_view text(s, n);
  LuaJsonReader reader(L);
  if (nlohmann::ordered_json::sax_parse(text, &reader)) return 1;
  if (reader.too_deep()) {
    return luaL_error(L, "Found too many nested data structures (%d) at character %d",
                      kMostNesting + 1, static_cast<int>(TooDeepAt(text)));
  }
  return luaL_error(L, "%s", reader.error().c_str());
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
    // The smallest int32 has no negation: Redis's fix of CVE-2024-31449 takes the next one up
    // (it once wrote 2 GB before the buffer).
    if (n == INT32_MIN) n = INT32_MIN + 1;
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

// A string of a decimal whole number, with or without a minus and nothing else, whose value a
// double holds exactly (at most 2^53): that number, as strtod reads it (-0 for "-0"). Otherwise
// none, and the string is read as Lua reads it.
std::optional<double> ExactWholeNumber(std::string_view s) {
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t n = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > (uint64_t{1} << 53)) return std::nullopt;
  const double d = static_cast<double>(n);
  return negative ? -d : d;
}

// Lua 5.1's tonumber (lbaselib.c's luaB_tonumber), answering as it does. Lua reads a string in
// base 10 twice through strtod (lua_isnumber, then lua_tonumber), a tenth of a limiter script's
// time when its ARGV are numbers; a whole number, the commonest (a timestamp, a count), is read
// here once, and any other string as Lua reads it.
int ToNumber(lua_State* L) {
  const int base = luaL_optint(L, 2, 10);
  if (base == 10) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) == LUA_TSTRING) {
      size_t size = 0;
      const char* s = lua_tolstring(L, 1, &size);
      if (const std::optional<double> d = ExactWholeNumber(std::string_view(s, size))) {
        lua_pushnumber(L, *d);
        return 1;
      }
    }
    if (lua_isnumber(L, 1)) {
      lua_pushnumber(L, lua_tonumber(L, 1));
      return 1;
    }
  } else {
    const char* s1 = luaL_checkstring(L, 1);
    char* s2 = nullptr;
    luaL_argcheck(L, 2 <= base && base <= 36, 2, "base out of range");
    const unsigned long n = std::strtoul(s1, &s2, base);
    if (s1 != s2) {  // at least one digit
      while (std::isspace(static_cast<unsigned char>(*s2))) ++s2;
      if (*s2 == '\0') {
        lua_pushnumber(L, static_cast<lua_Number>(n));
        return 1;
      }
    }
  }
  lua_pushnil(L);
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
  lua_register(L, "tonumber", ToNumber);
  PushCjson(L);
  lua_setglobal(L, "cjson");
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
