// MemoryKv's pattern matching (impl/store/lua_patterns.cc, bounded by the script's budget) is
// Lua 5.1's: string.find, match, gmatch and gsub give what Debian's Lua 5.1 gives, results and
// errors alike, on patterns and subjects drawn from every pattern item (classes, sets, captures,
// back references, balances, frontiers, anchors, repetitions, malformed ones).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <lua.hpp>
#include <memory>
#include <string>

#include "impl/store/lua_libraries_internal.h"

namespace ratelab {
namespace {

// What `script` returns (a string), or the error it raises, in a state with the string library,
// Lua's own or with the bounded pattern functions in place.
std::string RunCalls(bool bounded, const std::string& script, const std::string& s,
                     const std::string& p, const std::string& r) {
  std::unique_ptr<lua_State, void (*)(lua_State*)> state(luaL_newstate(), lua_close);
  lua_State* L = state.get();
  luaL_openlibs(L);
  if (bounded) internal::OpenBoundedStringLibrary(L);
  if (luaL_loadstring(L, script.c_str()) != 0)
    return "compile: " + std::string(lua_tostring(L, -1));
  lua_pushlstring(L, s.data(), s.size());
  lua_pushlstring(L, p.data(), p.size());
  lua_pushlstring(L, r.data(), r.size());
  if (lua_pcall(L, 3, 1, 0) != 0) return "error: " + std::string(lua_tostring(L, -1));
  size_t n = 0;
  const char* out = lua_tolstring(L, -1, &n);
  return out == nullptr ? "(not a string)" : std::string(out, n);
}

// Every call, each result written out with its type, each call's error caught.
constexpr char kCalls[] = R"lua(
local s, p, r = ...
local out = {}
local function put(...)
  local n = select('#', ...)
  local parts = {tostring(n)}
  for i = 1, n do
    local v = select(i, ...)
    parts[#parts + 1] = type(v) .. ':' .. tostring(v)
  end
  out[#out + 1] = table.concat(parts, ',')
end
local function try(f) local ok, e = pcall(f) if not ok then out[#out + 1] = 'E:' .. e end end
try(function() put(string.find(s, p)) end)
try(function() put(string.find(s, p, 3)) end)
try(function() put(string.find(s, p, -4)) end)
try(function() put(string.find(s, p, 1, true)) end)
try(function() put(string.match(s, p)) end)
try(function() put(string.match(s, p, 2)) end)
try(function() for a, b in string.gmatch(s, p) do put(a, b) end end)
try(function() put(string.gsub(s, p, r)) end)
try(function() put(string.gsub(s, p, r, 2)) end)
try(function() put(string.gsub(s, p, function(a, b) return b or (a and #a > 1 and a) end)) end)
try(function() put(string.gsub(s, p, {a = 'A', ab = false, b = 7})) end)
return table.concat(out, '\n')
)lua";

rc::Gen<std::string> Subject() {
  return rc::gen::container<std::string>(rc::gen::element(
      'a', 'b', 'c', 'A', '1', '2', ' ', '.', '(', ')', '[', ']', '%', '-', '\n', '\0', 'z'));
}

rc::Gen<std::string> Item() {
  return rc::gen::element<std::string>(
      "a", "b", ".", "%a", "%d", "%s", "%w", "%p", "%A", "%S", "%x", "%z", "%%", "%.", "[ab]",
      "[^a]", "[a-c]", "[%d%s]", "[]]", "[^]a]", "(", ")", "()", "%1", "%2", "%bab", "%b()",
      "%f[%w]", "%f[%W]", "^", "$", "*", "+", "-", "?", "[", "%", "%f", "%b", "x");
}

rc::Gen<std::string> Pattern() {
  return rc::gen::map(rc::gen::resize(8, rc::gen::container<std::vector<std::string>>(Item())),
                      [](const std::vector<std::string>& items) {
                        std::string p;
                        for (const std::string& i : items) p += i;
                        return p;
                      });
}

rc::Gen<std::string> Replacement() {
  return rc::gen::element<std::string>("", "x", "%0", "%1", "%2", "<%1>", "%%", "%", "%a", "[%0]");
}

RC_GTEST_PROP(LuaPatterns, AnswerAsLua51Does, ()) {
  const std::string s = *rc::gen::resize(16, Subject());
  const std::string p = *Pattern();
  const std::string r = *Replacement();
  RC_TAG(p.find('%') != std::string::npos ? "escape" : "plain");
  RC_ASSERT(RunCalls(true, kCalls, s, p, r) == RunCalls(false, kCalls, s, p, r));
}

// A few cases by hand, each a rule of Lua 5.1 worth naming.
TEST(LuaPatterns, KeepLua51sOwnRules) {
  const auto same = [](const std::string& s, const std::string& p, const std::string& r) {
    const std::string ours = RunCalls(true, kCalls, s, p, r);
    EXPECT_EQ(ours, RunCalls(false, kCalls, s, p, r)) << "s=" << s << " p=" << p << " r=" << r;
    return ours;
  };
  same("a^b", "^", "x");                                 // '^' in gmatch is a character
  same("abc", std::string("b\0c", 3), "x");              // a pattern ends at its zero byte
  same("abc", "b", "%");                                 // a '%' ending the replacement
  same("hello world from lua", "(%w+) (%w+)", "%2 %1");  // captures swapped
  same("THE (quick) fox", "%f[%a]%a+", "<%0>");          // a frontier
  same("[[x]]", "%b[]", "y");                            // a balance
  same("abc", "(", "x");                                 // unfinished capture
  same("abc", "%", "x");                                 // ends with '%'
  same("abc", "[a", "x");                                // missing ']'
  same("abc", "%1", "x");                                // invalid capture index
}

}  // namespace
}  // namespace ratelab
