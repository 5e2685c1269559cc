// string.find, string.match, string.gmatch (and its old name gfind), string.gsub and string.rep
// for MemoryKv's scripts. The first four are Lua 5.1's pattern matching, the same choices byte
// for byte (a pattern ends at its first zero byte; '%' before a character that is not a digit in
// a replacement is that character; '^' in gmatch is a character), with two bounds Lua 5.1's own
// lacks. Every step of a match (each pattern item tried, each character a repetition or a balance
// scans; for a plain find each place compared, a step every 64 bytes, and for gsub what it
// copies, every 8) is taken from the script's budget (lua_budget.h), so a pattern that
// backtracks without end ends the script as an endless loop does; and a match nests at most
// kMostDepth items deep ("pattern too complex", as Lua 5.2 says), where Lua 5.1 recurses until
// the C stack overflows. string.rep is Lua's own, its result taken from the budget first.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <lua.hpp>

#include "impl/store/lua_budget.h"
#include "impl/store/lua_libraries_internal.h"

namespace ratelab::internal {
namespace {

constexpr char kEscape = '%';
constexpr char kSpecials[] = "^$*+?.([%-";
constexpr ptrdiff_t kUnfinished = -1;  // a capture still open
constexpr ptrdiff_t kPosition = -2;    // a position capture, "()"
constexpr int kMostDepth = 200;
constexpr int64_t kChargeEvery = 4096;  // steps counted before they are taken from the budget
constexpr size_t kBytesAStep = 64;      // what a plain find compares in about an instruction's time
constexpr size_t kCharsAStep = 8;       // what gsub copies, a character at a time, in as long
constexpr double kMostRepBytes = 256.0 * (1 << 20);  // LuaScripting::kMemoryCap

unsigned char Byte(char c) { return static_cast<unsigned char>(c); }

struct MatchState {
  const char* src_init;  // the subject
  const char* src_end;   // its end
  lua_State* L;
  int level = 0;  // captures open or closed so far
  int depth = 0;  // match calls nested now
  int64_t steps = 0;
  struct {
    const char* init;
    ptrdiff_t len;
  } capture[LUA_MAXCAPTURES];

  MatchState(lua_State* state, const char* s, size_t length)
      : src_init(s), src_end(s + length), L(state) {}
  // Counts `n` steps, taking what is counted from the budget now and then.
  void Step(int64_t n = 1) {
    steps += n;
    if (steps >= kChargeEvery) Charge();
  }
  void Charge() {
    const int64_t taken = steps;
    steps = 0;
    ChargeLuaBudget(L, taken);
  }
};

const char* Match(MatchState& ms, const char* s, const char* p);

int CheckCapture(MatchState& ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms.level || ms.capture[l].len == kUnfinished) {
    return luaL_error(ms.L, "invalid capture index");
  }
  return l;
}

int CaptureToClose(MatchState& ms) {
  int level = ms.level;
  for (level--; level >= 0; level--) {
    if (ms.capture[level].len == kUnfinished) return level;
  }
  return luaL_error(ms.L, "invalid pattern capture");
}

const char* ClassEnd(MatchState& ms, const char* p) {
  switch (*p++) {
    case kEscape:
      if (*p == '\0') luaL_error(ms.L, "malformed pattern (ends with '%%')");
      return p + 1;
    case '[':
      if (*p == '^') p++;
      do {  // look for a ']'
        if (*p == '\0') luaL_error(ms.L, "malformed pattern (missing ']')");
        if (*(p++) == kEscape && *p != '\0') p++;  // skip escapes (e.g. '%]')
      } while (*p != ']');
      return p + 1;
    default:
      return p;
  }
}

bool MatchClass(int c, int cl) {
  bool res;
  switch (std::tolower(cl)) {
    case 'a':
      res = std::isalpha(c) != 0;
      break;
    case 'c':
      res = std::iscntrl(c) != 0;
      break;
    case 'd':
      res = std::isdigit(c) != 0;
      break;
    case 'l':
      res = std::islower(c) != 0;
      break;
    case 'p':
      res = std::ispunct(c) != 0;
      break;
    case 's':
      res = std::isspace(c) != 0;
      break;
    case 'u':
      res = std::isupper(c) != 0;
      break;
    case 'w':
      res = std::isalnum(c) != 0;
      break;
    case 'x':
      res = std::isxdigit(c) != 0;
      break;
    case 'z':
      res = c == 0;
      break;
    default:
      return cl == c;
  }
  return std::isupper(cl) ? !res : res;
}

bool MatchBracketClass(int c, const char* p, const char* ec) {
  bool sig = true;
  if (*(p + 1) == '^') {
    sig = false;
    p++;  // skip the '^'
  }
  while (++p < ec) {
    if (*p == kEscape) {
      p++;
      if (MatchClass(c, Byte(*p))) return sig;
    } else if (*(p + 1) == '-' && p + 2 < ec) {
      p += 2;
      if (Byte(*(p - 2)) <= c && c <= Byte(*p)) return sig;
    } else if (Byte(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

bool SingleMatch(int c, const char* p, const char* ep) {
  switch (*p) {
    case '.':
      return true;
    case kEscape:
      return MatchClass(c, Byte(*(p + 1)));
    case '[':
      return MatchBracketClass(c, p, ep - 1);
    default:
      return Byte(*p) == c;
  }
}

const char* MatchBalance(MatchState& ms, const char* s, const char* p) {
  if (*p == '\0' || *(p + 1) == '\0') luaL_error(ms.L, "unbalanced pattern");
  if (s >= ms.src_end || *s != *p) return nullptr;
  const int b = *p;
  const int e = *(p + 1);
  int cont = 1;
  while (++s < ms.src_end) {
    ms.Step();
    if (*s == e) {
      if (--cont == 0) return s + 1;
    } else if (*s == b) {
      cont++;
    }
  }
  return nullptr;  // the string ends out of balance
}

const char* MaxExpand(MatchState& ms, const char* s, const char* p, const char* ep) {
  ptrdiff_t i = 0;  // how many characters the item matches
  while (s + i < ms.src_end && SingleMatch(Byte(*(s + i)), p, ep)) {
    ms.Step();
    i++;
  }
  // Tries the longest first, then one fewer each time.
  while (i >= 0) {
    if (const char* res = Match(ms, s + i, ep + 1)) return res;
    i--;
  }
  return nullptr;
}

const char* MinExpand(MatchState& ms, const char* s, const char* p, const char* ep) {
  while (true) {
    if (const char* res = Match(ms, s, ep + 1)) return res;
    if (s < ms.src_end && SingleMatch(Byte(*s), p, ep)) {
      s++;  // one more character, and try again
    } else {
      return nullptr;
    }
  }
}

const char* StartCapture(MatchState& ms, const char* s, const char* p, ptrdiff_t what) {
  const int level = ms.level;
  if (level >= LUA_MAXCAPTURES) luaL_error(ms.L, "too many captures");
  ms.capture[level].init = s;
  ms.capture[level].len = what;
  ms.level = level + 1;
  const char* res = Match(ms, s, p);
  if (res == nullptr) ms.level--;  // undo the capture
  return res;
}

const char* EndCapture(MatchState& ms, const char* s, const char* p) {
  const int l = CaptureToClose(ms);
  ms.capture[l].len = s - ms.capture[l].init;  // close it
  const char* res = Match(ms, s, p);
  if (res == nullptr) ms.capture[l].len = kUnfinished;  // undo the closing
  return res;
}

const char* MatchCapture(MatchState& ms, const char* s, int l) {
  l = CheckCapture(ms, l);
  const auto len = static_cast<size_t>(ms.capture[l].len);
  if (static_cast<size_t>(ms.src_end - s) >= len && std::memcmp(ms.capture[l].init, s, len) == 0) {
    return s + len;
  }
  return nullptr;
}

// Where the subject from `s` stops matching the pattern from `p`, or nullptr.
const char* MatchItems(MatchState& ms, const char* s, const char* p) {
  while (true) {
    ms.Step();
    switch (*p) {
      case '(':  // a capture opens
        if (*(p + 1) == ')') return StartCapture(ms, s, p + 2, kPosition);
        return StartCapture(ms, s, p + 1, kUnfinished);
      case ')':  // and closes
        return EndCapture(ms, s, p + 1);
      case kEscape:
        if (*(p + 1) == 'b') {
          s = MatchBalance(ms, s, p + 2);
          if (s == nullptr) return nullptr;
          p += 4;
          continue;
        }
        if (*(p + 1) == 'f') {  // a frontier
          p += 2;
          if (*p != '[') luaL_error(ms.L, "missing '[' after '%%f' in pattern");
          const char* ep = ClassEnd(ms, p);
          // (At the subject's end, the zero byte Lua keeps after every string.)
          const char previous = s == ms.src_init ? '\0' : *(s - 1);
          if (MatchBracketClass(Byte(previous), p, ep - 1) ||
              !MatchBracketClass(Byte(*s), p, ep - 1)) {
            return nullptr;
          }
          p = ep;
          continue;
        }
        if (std::isdigit(Byte(*(p + 1)))) {  // a capture matched again, %1 to %9
          s = MatchCapture(ms, s, Byte(*(p + 1)));
          if (s == nullptr) return nullptr;
          p += 2;
          continue;
        }
        break;
      case '\0':  // the pattern's end
        return s;
      case '$':
        if (*(p + 1) == '\0') return s == ms.src_end ? s : nullptr;
        break;
      default:
        break;
    }
    // A single item, and what repeats it.
    const char* ep = ClassEnd(ms, p);
    const bool m = s < ms.src_end && SingleMatch(Byte(*s), p, ep);
    switch (*ep) {
      case '?': {
        if (m) {
          if (const char* res = Match(ms, s + 1, ep + 1)) return res;
        }
        p = ep + 1;
        continue;
      }
      case '*':
        return MaxExpand(ms, s, p, ep);
      case '+':
        return m ? MaxExpand(ms, s + 1, p, ep) : nullptr;
      case '-':
        return MinExpand(ms, s, p, ep);
      default:
        if (!m) return nullptr;
        s++;
        p = ep;
        continue;
    }
  }
}

const char* Match(MatchState& ms, const char* s, const char* p) {
  if (ms.depth >= kMostDepth) luaL_error(ms.L, "pattern too complex");
  ms.depth++;
  const char* res = MatchItems(ms, s, p);
  ms.depth--;
  return res;
}

// Lua 5.1's lmemfind: where `s2` first occurs in `s1`, each place compared a step.
const char* FindPlain(MatchState& ms, const char* s1, size_t l1, const char* s2, size_t l2) {
  if (l2 == 0) return s1;
  if (l2 > l1) return nullptr;
  l2--;  // the first character is found with memchr
  l1 = l1 - l2;
  const char* init;
  while (l1 > 0 && (init = static_cast<const char*>(std::memchr(s1, *s2, l1))) != nullptr) {
    ms.Step(1 + static_cast<int64_t>(l2 / kBytesAStep));
    init++;  // past the first character
    if (std::memcmp(init, s2 + 1, l2) == 0) return init - 1;
    l1 -= static_cast<size_t>(init - s1);
    s1 = init;
  }
  return nullptr;
}

void PushOneCapture(MatchState& ms, int i, const char* s, const char* e) {
  if (i >= ms.level) {
    if (i == 0) {  // no captures: the whole match
      lua_pushlstring(ms.L, s, static_cast<size_t>(e - s));
    } else {
      luaL_error(ms.L, "invalid capture index");
    }
    return;
  }
  const ptrdiff_t l = ms.capture[i].len;
  if (l == kUnfinished) luaL_error(ms.L, "unfinished capture");
  if (l == kPosition) {
    lua_pushinteger(ms.L, ms.capture[i].init - ms.src_init + 1);
  } else {
    lua_pushlstring(ms.L, ms.capture[i].init, static_cast<size_t>(l));
  }
}

int PushCaptures(MatchState& ms, const char* s, const char* e) {
  const int n = ms.level == 0 && s != nullptr ? 1 : ms.level;
  luaL_checkstack(ms.L, n, "too many captures");
  for (int i = 0; i < n; i++) PushOneCapture(ms, i, s, e);
  return n;
}

ptrdiff_t RelativePosition(ptrdiff_t pos, size_t len) {
  if (pos < 0) pos += static_cast<ptrdiff_t>(len) + 1;
  return pos >= 0 ? pos : 0;
}

int FindOrMatch(lua_State* L, bool find) {
  size_t l1 = 0, l2 = 0;
  const char* s = luaL_checklstring(L, 1, &l1);
  const char* p = luaL_checklstring(L, 2, &l2);
  ptrdiff_t init = RelativePosition(luaL_optinteger(L, 3, 1), l1) - 1;
  if (init < 0) {
    init = 0;
  } else if (static_cast<size_t>(init) > l1) {
    init = static_cast<ptrdiff_t>(l1);
  }
  MatchState ms(L, s, l1);
  if (find && (lua_toboolean(L, 4) || std::strpbrk(p, kSpecials) == nullptr)) {
    // A plain find: no specials, or asked for.
    const char* s2 = FindPlain(ms, s + init, l1 - static_cast<size_t>(init), p, l2);
    ms.Charge();
    if (s2 != nullptr) {
      lua_pushinteger(L, s2 - s + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(s2 - s + static_cast<ptrdiff_t>(l2)));
      return 2;
    }
  } else {
    const bool anchor = *p == '^';
    if (anchor) p++;
    const char* s1 = s + init;
    do {
      ms.level = 0;
      if (const char* res = Match(ms, s1, p)) {
        ms.Charge();
        if (find) {
          lua_pushinteger(L, s1 - s + 1);  // start
          lua_pushinteger(L, res - s);     // end
          return PushCaptures(ms, nullptr, nullptr) + 2;
        }
        return PushCaptures(ms, s1, res);
      }
    } while (s1++ < ms.src_end && !anchor);
    ms.Charge();
  }
  lua_pushnil(L);  // not found
  return 1;
}

int Find(lua_State* L) { return FindOrMatch(L, true); }
int MatchFunction(lua_State* L) { return FindOrMatch(L, false); }

int GmatchNext(lua_State* L) {
  size_t ls = 0;
  const char* s = lua_tolstring(L, lua_upvalueindex(1), &ls);
  const char* p = lua_tostring(L, lua_upvalueindex(2));
  MatchState ms(L, s, ls);
  for (const char* src = s + static_cast<size_t>(lua_tointeger(L, lua_upvalueindex(3)));
       src <= ms.src_end; src++) {
    ms.level = 0;
    if (const char* e = Match(ms, src, p)) {
      ms.Charge();
      lua_Integer next = e - s;
      if (e == src) next++;  // an empty match: go on past it
      lua_pushinteger(L, next);
      lua_replace(L, lua_upvalueindex(3));
      return PushCaptures(ms, src, e);
    }
  }
  ms.Charge();
  return 0;  // not found
}

int Gmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, GmatchNext, 3);
  return 1;
}

void AddString(MatchState& ms, luaL_Buffer* b, const char* s, const char* e) {
  size_t l = 0;
  const char* news = lua_tolstring(ms.L, 3, &l);
  // What it writes is copied in C too: a long replacement at every place of a long subject was
  // minutes of copying under no count (found by fuzz/lua_script.cc).
  ms.Step(1 + static_cast<int64_t>((l + static_cast<size_t>(e - s)) / kCharsAStep));
  for (size_t i = 0; i < l; i++) {
    if (news[i] != kEscape) {  // the run of text up to the next '%', copied whole
      const void* escape = std::memchr(news + i, kEscape, l - i);
      const size_t end =
          escape == nullptr ? l : static_cast<size_t>(static_cast<const char*>(escape) - news);
      luaL_addlstring(b, news + i, end - i);
      i = end - 1;
      continue;
    }
    i++;  // skip the '%' (at the end, to the zero byte past the string, as Lua 5.1 does)
    if (!std::isdigit(Byte(news[i]))) {
      luaL_addchar(b, news[i]);
    } else if (news[i] == '0') {
      luaL_addlstring(b, s, static_cast<size_t>(e - s));
    } else {
      PushOneCapture(ms, news[i] - '1', s, e);
      luaL_addvalue(b);  // the capture
    }
  }
}

void AddValue(MatchState& ms, luaL_Buffer* b, const char* s, const char* e) {
  lua_State* L = ms.L;
  switch (lua_type(L, 3)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      AddString(ms, b, s, e);
      return;
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = PushCaptures(ms, s, e);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE:
      PushOneCapture(ms, 0, s, e);
      lua_gettable(L, 3);
      break;
    default:
      break;
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the original
    lua_pop(L, 1);
    lua_pushlstring(L, s, static_cast<size_t>(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  ms.Step(1 + static_cast<int64_t>(lua_objlen(L, -1) / kBytesAStep));
  luaL_addvalue(b);  // the replacement
}

int Gsub(lua_State* L) {
  size_t srcl = 0;
  const char* src = luaL_checklstring(L, 1, &srcl);
  const char* p = luaL_checkstring(L, 2);
  const int tr = lua_type(L, 3);
  const int max_s = luaL_optint(L, 4, static_cast<int>(srcl + 1));
  const bool anchor = *p == '^';
  if (anchor) p++;
  luaL_argcheck(L,
                tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                3, "string/function/table expected");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  MatchState ms(L, src, srcl);
  int n = 0;
  while (n < max_s) {
    ms.level = 0;
    const char* e = Match(ms, src, p);
    if (e != nullptr) {
      n++;
      AddValue(ms, &b, src, e);
    }
    if (e != nullptr && e > src) {  // a non-empty match
      src = e;
    } else if (src < ms.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  ms.Charge();
  luaL_addlstring(&b, src, static_cast<size_t>(ms.src_end - src));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);  // the number of substitutions
  return 2;
}

// string.rep, its result's bytes taken from the budget before Lua's own makes them: the one
// string function whose result can be far longer than what it is given (a string of 256 MiB,
// the state's cap, copied piece by piece, was seconds outside any count).
int Rep(lua_State* L) {
  size_t l = 0;
  luaL_checklstring(L, 1, &l);
  const lua_Integer n = luaL_checkinteger(L, 2);
  if (n > 0 && l > 0) {
    // (No more than a state may hold is ever made: past that, Lua's own ends in "not enough
    // memory" once the state's cap is reached.)
    const double bytes = std::min(static_cast<double>(l) * static_cast<double>(n), kMostRepBytes);
    ChargeLuaBudget(L, static_cast<int64_t>(bytes / kBytesAStep));
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

}  // namespace

void OpenBoundedStringLibrary(lua_State* L) {
  lua_getglobal(L, "string");
  for (const luaL_Reg& f :
       {luaL_Reg{"find", Find}, luaL_Reg{"match", MatchFunction}, luaL_Reg{"gmatch", Gmatch},
        luaL_Reg{"gfind", Gmatch}, luaL_Reg{"gsub", Gsub}}) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  lua_getfield(L, -1, "rep");  // Lua's own, called once the budget allows
  lua_pushcclosure(L, Rep, 1);
  lua_setfield(L, -2, "rep");
  lua_pop(L, 1);
}

}  // namespace ratelab::internal
