// Redis's `struct` for scripts: Roberto Ierusalimschy's struct 0.2 (pack, unpack, size) with
// Redis's bounds checks, written to the same choices byte for byte.
#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <cstring>
#include <lua.hpp>
#include <string>

#include "impl/store/lua_libraries_internal.h"

namespace ratelab::internal {
namespace {

constexpr int kMostIntSize = 32;
constexpr int kNativeAlign = 8;  // a double's alignment on this platform

// The integer options, signed (lower case) and unsigned: byte, short, long, size_t, int.
bool IsInteger(char opt) { return opt != '\0' && std::strchr("bBhHlLTiI", opt) != nullptr; }
constexpr char kInteger = 'i';  // what a switch over options names them all by

enum class Endian { kLittle, kBig };
struct Header {
  Endian endian = Endian::kLittle;  // native
  int align = 1;
};

int GetNumber(lua_State* L, const char** fmt, int fallback) {
  if (!std::isdigit(static_cast<unsigned char>(**fmt))) return fallback;
  int a = 0;
  do {
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0')) {
      luaL_error(L, "integral size overflow");
    }
    a = a * 10 + *((*fmt)++) - '0';
  } while (std::isdigit(static_cast<unsigned char>(**fmt)));
  return a;
}

size_t OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
    case 'x':
      return 1;
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'c':
      return static_cast<size_t>(GetNumber(L, fmt, 1));
    case 'i':
    case 'I': {
      const int size = GetNumber(L, fmt, sizeof(int));
      if (size > kMostIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMostIntSize);
      }
      return static_cast<size_t>(size);
    }
    default:
      return 0;
  }
}

size_t PaddingFor(size_t at, const Header& h, char opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  size = std::min(size, static_cast<size_t>(h.align));
  return (size - (at & (size - 1))) & (size - 1);
}

void ControlOption(lua_State* L, char opt, const char** fmt, Header& h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h.endian = Endian::kBig;
      return;
    case '<':
      h.endian = Endian::kLittle;
      return;
    case '!': {
      const int a = GetNumber(L, fmt, kNativeAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h.align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

// `size` bytes of `v` (sign-extended past 8 bytes as zeros, as struct writes them).
void PutInteger(std::string& out, uint64_t v, Endian endian, size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    bytes[endian == Endian::kLittle ? i : size - 1 - i] = static_cast<char>(v & 0xff);
    v = i < 7 ? v >> 8 : 0;
  }
  out += bytes;
}

template <typename T>
void PutFloating(std::string& out, T value, Endian endian) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  if (endian == Endian::kBig) std::reverse(bytes, bytes + sizeof(T));
  out.append(bytes, sizeof(T));
}

int StructPack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  int arg = 2;
  std::string out;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    out.append(PaddingFor(out.size(), h, opt, size), '\0');
    switch (IsInteger(opt) ? kInteger : opt) {
      case kInteger: {
        const double n = luaL_checknumber(L, arg++);
        // In range as C converts it; past the range (or NaN), what x86 gives: the top bit.
        const uint64_t v = n >= -9223372036854775808.0 && n < 0
                               ? static_cast<uint64_t>(static_cast<int64_t>(n))
                           : n >= 0 && n < 18446744073709551616.0 ? static_cast<uint64_t>(n)
                                                                  : uint64_t{1} << 63;
        PutInteger(out, v, h.endian, size);
        break;
      }
      case 'x':
        out += '\0';
        break;
      case 'f':
        PutFloating(out, static_cast<float>(luaL_checknumber(L, arg++)), h.endian);
        break;
      case 'd':
        PutFloating(out, luaL_checknumber(L, arg++), h.endian);
        break;
      case 'c':
      case 's': {
        size_t len = 0;
        const char* s = luaL_checklstring(L, arg, &len);
        if (size == 0) size = len;
        luaL_argcheck(L, len >= size, arg, "string too short");
        ++arg;
        out.append(s, size);
        if (opt == 's') out += '\0';
        break;
      }
      default:
        ControlOption(L, opt, &fmt, h);
    }
  }
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

double GetInteger(const char* p, Endian endian, bool is_signed, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) {
    v = (v << 8) | static_cast<uint8_t>(p[endian == Endian::kBig ? i : size - 1 - i]);
  }
  if (!is_signed) return static_cast<double>(v);
  if (size < 8 && (v >> (size * 8 - 1)) != 0) v |= ~uint64_t{0} << (size * 8);
  return static_cast<double>(static_cast<int64_t>(v));
}

int StructUnpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 2, &len);
  // As struct's size_t: a negative offset is a huge one, which no data is long enough for.
  auto pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  pos--;
  Header h;
  int n = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    size_t size = OptionSize(L, opt, &fmt);
    pos += PaddingFor(pos, h, opt, size);
    luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (IsInteger(opt) ? kInteger : opt) {
      case kInteger:
        lua_pushnumber(L, GetInteger(data + pos, h.endian, std::islower(opt) != 0, size));
        ++n;
        break;
      case 'x':
        break;
      case 'f':
      case 'd': {
        char bytes[sizeof(double)];
        std::memcpy(bytes, data + pos, size);
        if (h.endian == Endian::kBig) std::reverse(bytes, bytes + size);
        if (opt == 'f') {
          float f;
          std::memcpy(&f, bytes, sizeof f);
          lua_pushnumber(L, f);
        } else {
          double d;
          std::memcpy(&d, bytes, sizeof d);
          lua_pushnumber(L, d);
        }
        ++n;
        break;
      }
      case 'c':
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          // As Redis's (size_t) of the number on x86-64: past the range (negative, NaN), a
          // size no data holds.
          const double x = lua_tonumber(L, -1);
          size = x > -1 && x < 18446744073709551616.0 ? static_cast<size_t>(x) : SIZE_MAX;
          lua_pop(L, 1);
          --n;
          luaL_argcheck(L, size <= len && pos <= len - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++n;
        break;
      case 's': {
        const void* end = std::memchr(data + pos, '\0', len - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++n;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int StructSize(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Header h;
  size_t pos = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    const size_t size = OptionSize(L, opt, &fmt);
    pos += PaddingFor(pos, h, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!std::isalnum(static_cast<unsigned char>(opt))) ControlOption(L, opt, &fmt, h);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

void OpenStruct(lua_State* L) {
  SetLibrary(L, "struct", {{"pack", StructPack}, {"unpack", StructUnpack}, {"size", StructSize}});
}

}  // namespace ratelab::internal
