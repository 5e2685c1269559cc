// EVAL on MemoryKv against the Redis scripting documentation: conversions, errors, KEYS/ARGV,
// the virtual clock, determinism.
#include "impl/store/lua_scripting.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <lua.hpp>
#include <random>

#include "impl/store/memory_kv.h"
#include "testing/cpu_time.h"

namespace ratelab {
namespace {

class LuaScriptingTest : public ::testing::Test {
 protected:
  KvReply Eval(const std::string& script, std::vector<std::string> keys = {},
               std::vector<std::string> args = {}) {
    std::vector<std::string> argv = {"EVAL", script, std::to_string(keys.size())};
    argv.insert(argv.end(), keys.begin(), keys.end());
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }
  KvReply Run(const std::vector<std::string>& argv) {
    Result<KvReply> r = kv_.Execute(argv);
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : KvReply::Nil();
  }

  ManualClock clock_{FromUnixNanos(1'700'000'000'250'000'000)};
  MemoryKv kv_{clock_};
};

bool StartsWith(const KvReply& r, const std::string& prefix) {
  return r.is_error() && r.text.rfind(prefix, 0) == 0;
}

TEST_F(LuaScriptingTest, LuaValuesConvertToRedisReplies) {
  EXPECT_EQ(Eval("return 1"), KvReply::Integer(1));
  EXPECT_EQ(Eval("return 3.99"), KvReply::Integer(3));  // numbers truncate
  EXPECT_EQ(Eval("return -3.99"), KvReply::Integer(-3));
  EXPECT_EQ(Eval("return 'x'"), KvReply::Bulk("x"));
  EXPECT_EQ(Eval("return true"), KvReply::Integer(1));
  EXPECT_EQ(Eval("return false"), KvReply::Nil());
  EXPECT_EQ(Eval("return nil"), KvReply::Nil());
  EXPECT_EQ(Eval("return {1, 'two', {3}, nil, 5}"),  // an array stops at its first nil
            KvReply::Array({KvReply::Integer(1), KvReply::Bulk("two"),
                            KvReply::Array({KvReply::Integer(3)})}));
  EXPECT_EQ(Eval("return {1, false, 2}"),
            KvReply::Array({KvReply::Integer(1), KvReply::Nil(), KvReply::Integer(2)}));
  EXPECT_EQ(Eval("return redis.error_reply('MY failure')"), KvReply::Error("MY failure"));
  EXPECT_EQ(Eval("return redis.status_reply('FINE')"), KvReply::Status("FINE"));
  EXPECT_EQ(Eval("return {err='E1'}"), KvReply::Error("E1"));
}

// Found by the equivalence property under UBSan: a number past what an integer holds was cast
// (undefined behaviour); Redis's cast on x86-64 gives the smallest integer, as do NaN and -inf.
TEST_F(LuaScriptingTest, NumbersPastTheIntegerRangeReplyAsRedisDoes) {
  const KvReply smallest = KvReply::Integer(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Eval("return 2^63"), smallest);
  EXPECT_EQ(Eval("return 1/0"), smallest);
  EXPECT_EQ(Eval("return -1/0"), smallest);
  EXPECT_EQ(Eval("return 0/0"), smallest);
  EXPECT_EQ(Eval("return -2^63"), smallest);
  EXPECT_EQ(Eval("return 2^62"), KvReply::Integer(int64_t{1} << 62));
  // struct's c0 takes its size from a number, which a negative one cannot give.
  EXPECT_TRUE(StartsWith(Eval("return struct.unpack('bc0', string.char(255) .. 'abc')"), "ERR"));
}

TEST_F(LuaScriptingTest, RedisRepliesConvertToLuaValues) {
  Run({"SET", "s", "v"});
  EXPECT_EQ(Eval("return redis.call('GET', KEYS[1]) == false", {"missing"}), KvReply::Integer(1));
  EXPECT_EQ(Eval("return type(redis.call('INCR', KEYS[1]))", {"n"}), KvReply::Bulk("number"));
  EXPECT_EQ(Eval("return redis.call('SET', KEYS[1], 'x')['ok']", {"s"}), KvReply::Bulk("OK"));
  EXPECT_EQ(Eval("return redis.call('SET', KEYS[1], 'y')", {"s"}), KvReply::Status("OK"));
  EXPECT_EQ(Eval("local t = redis.call('TIME'); return {type(t[1]), #t}"),
            KvReply::Array({KvReply::Bulk("string"), KvReply::Integer(2)}));
}

TEST_F(LuaScriptingTest, KeysAndArgv) {
  EXPECT_EQ(Eval("return {KEYS[1], KEYS[2], ARGV[1], #ARGV}", {"a", "b"}, {"x", "y", "z"}),
            KvReply::Array(
                {KvReply::Bulk("a"), KvReply::Bulk("b"), KvReply::Bulk("x"), KvReply::Integer(3)}));
  EXPECT_EQ(Run({"EVAL", "return 1", "2", "a"}),
            KvReply::Error("ERR Number of keys can't be greater than number of args"));
  EXPECT_EQ(Run({"EVAL", "return 1", "-1"}),
            KvReply::Error("ERR Number of keys can't be negative"));
}

TEST_F(LuaScriptingTest, NumberArgumentsAreFormattedAsRedis70Does) {
  Eval("redis.call('SET', 'a', 0.1); redis.call('SET', 'b', 5); redis.call('SET', 'c', 2^53)");
  EXPECT_EQ(Run({"GET", "a"}), KvReply::Bulk("0.10000000000000001"));
  EXPECT_EQ(Run({"GET", "b"}), KvReply::Bulk("5"));
  EXPECT_EQ(Run({"GET", "c"}), KvReply::Bulk("9007199254740992"));
}

// Whole numbers take a path of their own (no printf): they and the numbers either side of
// where it ends print as %.17g prints them.
TEST_F(LuaScriptingTest, EveryNumberArgumentIsFormattedAsPercent17g) {
  std::vector<double> numbers = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.0,
                                 0.5,
                                 -2.5,
                                 1e15,
                                 1e16 + 2,
                                 1e17,
                                 1e300,
                                 9007199254740991.0,
                                 -9007199254740991.0,
                                 9007199254740992.0,
                                 -9007199254740992.0,
                                 9007199254740994.0,
                                 1700000000123456.0,
                                 1e-300,
                                 4.9e-324,
                                 123456789.125};
  std::mt19937_64 draw(3);
  for (int i = 0; i < 200; ++i) {
    numbers.push_back(static_cast<double>(static_cast<int64_t>(draw() >> (draw() % 64))) *
                      (i % 2 == 0 ? 1 : -1));
    numbers.push_back(
        std::ldexp(static_cast<double>(draw() >> 11), static_cast<int>(draw() % 80) - 60));
  }
  const std::string sha = Run({"SCRIPT", "LOAD", "redis.call('SET', 'n', tonumber(ARGV[1]))"}).text;
  for (const double x : numbers) {
    char exact[64], expected[64];
    std::snprintf(exact, sizeof exact, "%.17g", x);  // what tonumber reads back as x
    std::snprintf(expected, sizeof expected, "%.17g", std::strtod(exact, nullptr));
    Run({"EVALSHA", sha, "0", exact});
    EXPECT_EQ(Run({"GET", "n"}), KvReply::Bulk(expected)) << "for " << exact;
  }
}

// tonumber reads a whole number its own way (lua_libraries.cc): it answers as Lua 5.1's own, in
// a state of Lua's standard libraries, for every kind of string, number and base, and errs alike.
TEST_F(LuaScriptingTest, ToNumberAnswersAsLuasOwn) {
  const std::string chunk =
      "local s, base = ARGV[1], ARGV[2]\n"
      "if s == 'nil' then s = nil elseif s == 'number' then s = 12.5 elseif s == 'table' then s = "
      "{} end\n"
      "local ok, x = pcall(tonumber, s, tonumber(base))\n"
      "if not ok then return 'error ' .. string.match(x, 'bad argument.*') end\n"
      "if x == nil then return 'nil' end\n"
      "return string.format('%.17g', x)";
  lua_State* L = luaL_newstate();
  luaL_openlibs(L);
  const auto luas = [&](const std::string& s, const std::string& base) {
    lua_newtable(L);
    lua_pushlstring(L, s.data(), s.size());
    lua_rawseti(L, -2, 1);
    if (!base.empty()) {
      lua_pushlstring(L, base.data(), base.size());
      lua_rawseti(L, -2, 2);
    }
    lua_setglobal(L, "ARGV");
    EXPECT_EQ(luaL_loadstring(L, chunk.c_str()), 0);
    EXPECT_EQ(lua_pcall(L, 0, 1, 0), 0) << lua_tostring(L, -1);
    std::string out = lua_tostring(L, -1);
    lua_pop(L, 1);
    return out;
  };
  const std::vector<std::string> strings = {"0",
                                            "-0",
                                            "7",
                                            "-7",
                                            "007",
                                            "1700000000123456",
                                            "9007199254740992",
                                            "-9007199254740992",
                                            "9007199254740993",
                                            "18446744073709551616",
                                            "99999999999999999999",
                                            "12345678901234567",
                                            "1.5",
                                            "-2.25",
                                            "1e3",
                                            "1E-2",
                                            ".5",
                                            "5.",
                                            "+5",
                                            " 12",
                                            "12 ",
                                            "\t12\n",
                                            "1 2",
                                            "0x1A",
                                            "0X1f",
                                            "-0x10",
                                            "0x",
                                            "x1",
                                            "",
                                            "-",
                                            "--1",
                                            "abc",
                                            "12abc",
                                            "inf",
                                            "nan",
                                            "1e400",
                                            std::string("12\0"
                                                        "34",
                                                        5),
                                            "nil",
                                            "number",
                                            "table",
                                            "٣"};
  const std::array<std::string, 7> bases = {"", "10", "16", "2", "36", "1", "37"};
  for (const std::string& s : strings) {
    for (const std::string& base : bases) {
      std::vector<std::string> args = {s};
      if (!base.empty()) args.push_back(base);
      const KvReply ours = Eval(chunk, {}, args);
      EXPECT_EQ(ours, KvReply::Bulk(luas(s, base)))
          << "tonumber of '" << s << "' in base " << (base.empty() ? "10 (none given)" : base);
    }
  }
  lua_close(L);
}

TEST_F(LuaScriptingTest, CallRaisesErrorsAndPCallReturnsThem) {
  Run({"HSET", "h", "f", "1"});
  EXPECT_TRUE(StartsWith(Eval("return redis.call('INCR', KEYS[1])", {"h"}), "WRONGTYPE"));
  EXPECT_EQ(Eval("local r = redis.pcall('INCR', KEYS[1]); return r['err']", {"h"}),
            KvReply::Bulk("WRONGTYPE Operation against a key holding the wrong kind of value"));
  EXPECT_TRUE(StartsWith(Eval("return redis.call('EVAL', 'return 1', 0)"),
                         "ERR This Redis command is not allowed from script"));
  EXPECT_TRUE(StartsWith(Eval("return redis.call('SET', 'k', {})"),
                         "ERR Lua redis() command arguments must be strings or integers"));
}

// Redis 7.0 ends a raised error with the script and the line it was raised on (seen on
// redis-server 7.0.15); a returned error reply has neither.
TEST_F(LuaScriptingTest, RaisedErrorsSayWhichLine) {
  Run({"SET", "s", "x"});
  const std::string sha = Sha1Hex("local x = 1\nreturn redis.call('INCR', KEYS[1])");
  EXPECT_EQ(Eval("local x = 1\nreturn redis.call('INCR', KEYS[1])", {"s"}),
            KvReply::Error("ERR value is not an integer or out of range script: " + sha +
                           ", on @user_script:2."));
  EXPECT_EQ(Eval("error({err='X boom'})"),
            KvReply::Error("X boom script: " + Sha1Hex("error({err='X boom'})") +
                           ", on @user_script:1."));
  EXPECT_EQ(Eval("return redis.error_reply('X boom')"), KvReply::Error("X boom"));
}

TEST_F(LuaScriptingTest, ScriptErrorsBecomeErrorRepliesNotCrashes) {
  EXPECT_TRUE(StartsWith(Eval("return nil + 1"), "ERR user_script:1: attempt to perform"));
  EXPECT_TRUE(StartsWith(Eval("return +"), "ERR Error compiling script"));
  EXPECT_TRUE(StartsWith(Eval("error('boom')"), "ERR user_script:1: boom"));
  EXPECT_TRUE(StartsWith(Eval("return dofile('/etc/passwd')"), "ERR user_script:1:"));
  // The engine still works afterwards.
  EXPECT_EQ(Eval("return 2"), KvReply::Integer(2));
}

// Lua 5.1 loads a chunk that starts with ESC as bytecode, which a crafted script can use to
// corrupt memory; Redis's Lua only parses source.
TEST_F(LuaScriptingTest, AScriptSentAsBytecodeIsRefusedAsRedisRefusesIt) {
  const std::string bytecode = std::string("\033Lua\x51\0\1\4\x08\4\x08\0", 12) + "garbage";
  const KvReply r = Eval(bytecode);
  EXPECT_EQ(r, KvReply::Error("ERR Error compiling script (new function): user_script:1: "
                              "unexpected symbol near 'char(27)'"));
  EXPECT_TRUE(StartsWith(Run({"SCRIPT", "LOAD", bytecode}), "ERR Error compiling script"));
}

// Stores that share their compiled scripts answer as stores that compile their own, errors and
// their lines included, and a store new to a script still says NOSCRIPT first.
TEST(LuaCache, AStoreLoadingAScriptCompiledByAnotherAnswersAsIfItCompiledIt) {
  ManualClock clock(FromUnixNanos(1'700'000'000'000'000'000));
  const auto chunks = std::make_shared<LuaCache>();
  const std::string script =
      "local n = redis.call('INCR', KEYS[1])\n"
      "if n > 2 then error('past ' .. ARGV[1]) end\n"
      "return {n, redis.sha1hex(ARGV[1])}";
  const std::string bad = "return (";
  const auto execute = [](MemoryKv& kv, std::vector<std::string> argv) {
    Result<KvReply> r = kv.Execute(argv);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : KvReply::Nil();
  };
  const auto run = [&](MemoryKv& kv) {
    std::vector<KvReply> said;
    for (int i = 0; i < 4; ++i) said.push_back(execute(kv, {"EVAL", script, "1", "k", "two"}));
    said.push_back(execute(kv, {"EVAL", bad, "0"}));
    return said;
  };
  MemoryKv alone(clock);
  const std::vector<KvReply> own = run(alone);
  ASSERT_TRUE(own[3].is_error());
  EXPECT_NE(own[3].text.find("user_script:2: past two"), std::string::npos) << own[3].text;
  EXPECT_TRUE(own[4].is_error());
  for (int store = 0; store < 3; ++store) {
    MemoryKv shared(clock, Durability::kAlways, MemoryKv::kScriptBudget, chunks);
    const std::string sha = Sha1Hex(script);
    if (store > 0) {
      EXPECT_TRUE(StartsWith(execute(shared, {"EVALSHA", sha, "1", "k", "two"}), "NOSCRIPT"));
    }
    EXPECT_EQ(run(shared), own) << "store " << store;
  }
  EXPECT_TRUE(chunks->Find(Sha1Hex(script)).has_value());
  EXPECT_FALSE(chunks->Find(Sha1Hex(bad)).has_value());  // what did not compile is not kept
  // EVAL's SHA-1 of a body is worked out once for the stores of the cache (ShaOf), and is the
  // body's; a body past what the cache keeps is worked out each time, the same.
  EXPECT_EQ(chunks->ShaOf(script), Sha1Hex(script));
  EXPECT_EQ(chunks->ShaOf(bad), Sha1Hex(bad));
  const std::string huge(size_t{17} << 20, 'x');
  EXPECT_EQ(chunks->ShaOf(huge), Sha1Hex(huge));
  EXPECT_EQ(chunks->ShaOf(huge), Sha1Hex(huge));
}

// A state made new again (Renew) is the state just made: a script that looks at everything a
// script can reach (every global and library table, the string metatable, the memory the state
// holds) sees the same in both, after one that changed all of that. Twice, the second time after
// the state served again.
TEST(LuaScriptingRenew, AStateMadeNewAgainIsTheStateJustMade) {
  const auto none = [](std::span<const std::string>) { return KvReply::Nil(); };
  const std::string look = R"lua(
local seen, out = {}, {}
local function walk(t, path)
  if seen[t] then return end
  seen[t] = true
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = t[k]
    out[#out + 1] = path .. k .. '=' .. type(v)
    if type(v) == 'table' then walk(v, path .. k .. '.') end
  end
end
walk(_G, '')
out[#out + 1] = 'string metatable ' .. tostring(getmetatable('').__index == string)
out[#out + 1] = 'globals metatable ' .. type(getmetatable(_G))
out[#out + 1] = 'memory ' .. collectgarbage('count')
out[#out + 1] = 'random ' .. math.random(1000000)
return out)lua";
  // What a script may still change (the read-only globals refuse the rest: each try is made).
  const std::string scribble = R"lua(
local big = {}
for i = 1, 2000 do big[i] = string.rep(tostring(i), 300) end
local refused = 0
local function try(f) if not pcall(f) then refused = refused + 1 end end
for i = 1, 300 do try(function() _G['g' .. i] = {i} end) end
try(function() string.rep = nil end)
try(function() math.floor = function() return 0 end end)
try(function() table.insert = nil end)
try(function() cjson.encode = nil end)
try(function() redis.call = nil end)
try(function() getmetatable('').__index = {} end)
try(function() setmetatable(_G, {__index = function() return 1 end}) end)
try(function() rawset(string, 'x', 1) end)
try(function() table.insert(math, 1) end)
collectgarbage('stop')
return refused)lua";
  const auto looks = [&](LuaScripting& lua) {
    const KvReply sha = lua.Load(look);
    return lua.Run(sha.text, {}, {});
  };
  LuaScripting made(none, MemoryKv::kScriptBudget);
  // Asked, as the renewed state is below, for a script it does not hold: the question leaves the
  // same garbage (its SHA-1 as a Lua string) in both, which the memory below counts.
  EXPECT_FALSE(made.Exists(Sha1Hex("never loaded")));
  const KvReply fresh = looks(made);
  ASSERT_EQ(fresh.type, KvReply::Type::kArray) << fresh.text;
  ASSERT_GT(fresh.elements.size(), 100u);  // every library function, each by name

  LuaScripting used(none, MemoryKv::kScriptBudget);
  for (int round = 0; round < 2; ++round) {
    const KvReply sha = used.Load(scribble);
    ASSERT_EQ(used.Run(sha.text, {}, {}), KvReply::Integer(309));
    ASSERT_NE(looks(used), fresh);  // its memory, and the collector stopped
    used.Renew();
    used.Serve(none, MemoryKv::kScriptBudget, nullptr);
    EXPECT_FALSE(used.Exists(sha.text)) << "round " << round;
    EXPECT_EQ(looks(used), fresh) << "round " << round;
  }
}

// Stores that take their states from a cache answer as stores that make their own.
TEST(LuaCache, AStoreOnAStateGivenBackAnswersAsOnANewOne) {
  ManualClock clock(FromUnixNanos(1'700'000'000'000'000'000));
  const auto cache = std::make_shared<LuaCache>();
  const std::vector<std::vector<std::string>> commands = {
      {"EVAL", "leak = (leak or 0) + 1; return {leak, redis.call('INCR', KEYS[1])}", "1", "k"},
      {"EVAL", "string.upper = nil; return 1", "0"},
      {"EVAL", "collectgarbage('stop'); local t = {} for i = 1, 1000 do t[i] = {i} end return 1",
       "0"},
      {"EVAL", "return {string.upper('a'), rawget(_G, 'leak') == nil, redis.call('INCR', KEYS[1])}",
       "1", "k"},
  };
  const auto run = [&](MemoryKv& kv) {
    std::vector<KvReply> said;
    for (const auto& argv : commands) {
      Result<KvReply> r = kv.Execute(argv);
      EXPECT_TRUE(r.ok()) << r.status();
      said.push_back(r.ok() ? *r : KvReply::Nil());
    }
    return said;
  };
  MemoryKv alone(clock);
  const std::vector<KvReply> own = run(alone);
  // Neither a global nor a library can be changed: no script leaves anything for the next.
  EXPECT_TRUE(StartsWith(own[0],
                         "ERR user_script:1: Script attempted to access nonexistent "
                         "global variable 'leak'"))
      << own[0].text;
  EXPECT_TRUE(StartsWith(own[1], "ERR user_script:1: Attempt to modify a readonly table"))
      << own[1].text;
  EXPECT_EQ(own[3], KvReply::Array({KvReply::Bulk("A"), KvReply::Integer(1), KvReply::Integer(1)}));
  for (int store = 0; store < 3; ++store) {
    MemoryKv shared(clock, Durability::kAlways, MemoryKv::kScriptBudget, cache);
    EXPECT_EQ(run(shared), own) << "store " << store;
  }
}

TEST(LuaScriptingBudget, EndlessLoopEndsInAnError) {
  LuaScripting lua([](std::span<const std::string>) { return KvReply::Nil(); }, 1'000'000);
  const KvReply sha = lua.Load("while true do end");
  const KvReply r = lua.Run(sha.text, {}, {});
  ASSERT_TRUE(r.is_error());
  EXPECT_NE(r.text.find("exceeded its budget"), std::string::npos) << r.text;
}

// A script that asks for more memory than the cap (string.rep of 10 GB, an ever growing table)
// ends in an error reply at once, and the engine goes on.
TEST(LuaScriptingBudget, AScriptPastItsMemoryCapEndsInAnError) {
  LuaScripting lua([](std::span<const std::string>) { return KvReply::Nil(); }, 100'000'000,
                   /*memory_cap=*/16 << 20);
  for (const char* script :
       {"return string.rep('x', 1e10)", "local t = {} for i = 1, 1e9 do t[i] = i end return #t",
        "local s = 'x' while true do s = s .. s end"}) {
    const auto start = ThreadCpuTime();
    const KvReply r = lua.Run(lua.Load(script).text, {}, {});
    ASSERT_TRUE(r.is_error()) << script;
    EXPECT_NE(r.text.find("not enough memory"), std::string::npos) << r.text;
    EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(5)) << script;
  }
  EXPECT_EQ(lua.Run(lua.Load("return string.rep('x', 1000)").text, {}, {}),
            KvReply::Bulk(std::string(1000, 'x')));
}

// A reply of tables 100,000 deep (which once took a minute to convert) or of too many elements
// is an error reply.
TEST(LuaScriptingBudget, AReplyTooDeepOrTooLargeIsAnError) {
  LuaScripting lua([](std::span<const std::string>) { return KvReply::Nil(); }, 100'000'000);
  const KvReply deep =
      lua.Run(lua.Load("local t = {} for i = 1, 100000 do t = {t} end return t").text, {}, {});
  ASSERT_TRUE(deep.is_error());
  EXPECT_EQ(deep.text, "ERR the script's reply nests tables deeper than 1000");
  const KvReply wide =
      lua.Run(lua.Load("local t = {} for i = 1, 1000001 do t[i] = 1 end return t").text, {}, {});
  ASSERT_TRUE(wide.is_error());
  EXPECT_EQ(wide.text, "ERR the script's reply has more than 1000000 elements");
  const KvReply fine =
      lua.Run(lua.Load("local t = {} for i = 1, 999 do t = {t} end return t").text, {}, {});
  EXPECT_FALSE(fine.is_error()) << fine.text;
}

TEST_F(LuaScriptingTest, EvalShaAndScriptCache) {
  EXPECT_EQ(Run({"SCRIPT", "LOAD", "return 1"}),
            KvReply::Bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
  EXPECT_EQ(Run({"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}), KvReply::Integer(1));
  EXPECT_EQ(Run({"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "ffff"}),
            KvReply::Array({KvReply::Integer(1), KvReply::Integer(0)}));
  Run({"SCRIPT", "FLUSH"});
  EXPECT_EQ(Run({"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"}),
            KvReply::Error("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(Eval("return redis.sha1hex('return 1')"),
            KvReply::Bulk("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"));
}

TEST_F(LuaScriptingTest, ScriptsSeeTheVirtualClock) {
  EXPECT_EQ(Eval("return redis.call('TIME')"),
            KvReply::Array({KvReply::Bulk("1700000000"), KvReply::Bulk("250000")}));
  Run({"SET", "k", "v", "PX", "10"});
  clock_.Advance(std::chrono::milliseconds(11));
  EXPECT_EQ(Eval("return redis.call('EXISTS', KEYS[1])", {"k"}), KvReply::Integer(0));
}

TEST_F(LuaScriptingTest, MathRandomRestartsEveryScript) {
  const std::string script = "return {math.random(1000000), math.random(1000000)}";
  const KvReply first = Eval(script);
  EXPECT_EQ(Eval(script), first);
  EXPECT_NE(first.elements[0], first.elements[1]);
  // The span of an interval past int32 wraps, as Redis's int arithmetic does on x86-64 (found by
  // fuzz/lua_script.cc as an overflow); its first draw here is 0.1708...
  EXPECT_EQ(Eval("return {math.random(-2147483648, 0), math.random(-2147483648, 2147483647)}"),
            KvReply::Array({KvReply::Integer(-2514334062), KvReply::Integer(-2147483648)}));
}

}  // namespace
}  // namespace ratelab
namespace ratelab {
namespace {

// Redis's own fixes to its bundled libraries, as Debian's redis-server 7.0.15 answers.
TEST_F(LuaScriptingTest, BitToHexOfTheSmallestIntegerAnswersAsRedisDoes) {
  // Once a write two gigabytes before a stack buffer (SIGSEGV); Redis's fix of CVE-2024-31449.
  EXPECT_EQ(Eval("return bit.tohex(65535, -2147483648)"), KvReply::Bulk("0000FFFF"));
  EXPECT_EQ(Eval("return bit.tohex(65535, 2147483647)"), KvReply::Bulk("0000ffff"));
  EXPECT_EQ(Eval("return bit.tohex(-1, -3)"), KvReply::Bulk("FFF"));
}

// Lua bytecode reads and writes memory as it says (CVE-2015-4335): Redis's parser reads source
// only, and so does every way a script can compile a chunk.
TEST_F(LuaScriptingTest, NoWayToCompileAChunkTakesBytecode) {
  EXPECT_EQ(Eval("return tostring(loadstring(string.dump(function() return 1 end)))"),
            KvReply::Bulk("nil"));
  EXPECT_EQ(Eval("local f, e = loadstring(string.dump(function() return 1 end)) return e"),
            KvReply::Bulk("[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'"));
  EXPECT_EQ(Eval("local f, e = loadstring('\\27Lua', '=chunk') return e"),
            KvReply::Bulk("chunk:1: unexpected symbol near 'char(27)'"));
  EXPECT_EQ(Eval("local i = 0\n"
                 "local f, e = load(function() i = i + 1\n"
                 "  if i == 1 then return string.dump(function() end) end end)\n"
                 "return e"),
            KvReply::Bulk("(load):1: unexpected symbol near 'char(27)'"));
  // Source still compiles, and what it makes sees the same read-only globals.
  EXPECT_EQ(Eval("return loadstring('return 6 * 7')()"), KvReply::Integer(42));
  EXPECT_EQ(Eval("local i = 0\n"
                 "return load(function() i = i + 1 if i == 1 then return 'return 7' end end)()"),
            KvReply::Integer(7));
  EXPECT_TRUE(StartsWith(Eval("loadstring('y = 2')() return 1"),
                         "ERR [string \"y = 2\"]:1: Attempt to modify a readonly table script: "));
  EXPECT_EQ(Eval("local f, e = load(function() return {} end) return e"),
            KvReply::Error("ERR user_script:1: reader function must return a string"));
}

// The globals are Redis's, read-only, and so is every library: a script cannot leave anything
// for the next one (each reply as Debian's redis-server 7.0.15 gives it).
TEST_F(LuaScriptingTest, TheGlobalsAndLibrariesAreRedisssAndReadOnly) {
  for (const char* gone : {"os", "io", "debug", "print", "getfenv", "setfenv", "newproxy", "dofile",
                           "loadfile", "require", "package", "module", "undefined"}) {
    EXPECT_TRUE(StartsWith(Eval(std::string("return ") + gone),
                           std::string("ERR user_script:1: Script attempted to access "
                                       "nonexistent global variable '") +
                               gone + "'"))
        << gone;
  }
  for (const char* write : {"x = 1", "KEYS = {}", "string.foo = 1", "string.upper = nil",
                            "redis.call = nil", "math.random = nil", "cjson.null = 1",
                            "getmetatable('').__index = nil", "local s = string s.upper = nil"}) {
    EXPECT_TRUE(StartsWith(Eval(std::string(write) + " return 1"),
                           "ERR user_script:1: Attempt to modify a readonly table script: "))
        << write;
  }
  for (const char* write : {"rawset(_G, 'z', 1)", "rawset(string, 'z', 1)", "setmetatable(_G, nil)",
                            "setmetatable(string, {})", "table.insert(string, 1)"}) {
    EXPECT_TRUE(StartsWith(Eval(std::string(write) + " return 1"),
                           "ERR Attempt to modify a readonly table script: "))
        << write;
  }
  // Reading through them is as reading the tables themselves.
  EXPECT_EQ(Eval("KEYS[1] = 'x' return KEYS[1]", {"k"}), KvReply::Bulk("x"));
  EXPECT_EQ(Eval("return rawget(_G, 'redis') == redis and rawget(_G, 'nope') == nil"),
            KvReply::Integer(1));
  EXPECT_EQ(Eval("local n = 0 for k in pairs(_G) do n = n + 1 end return n"), KvReply::Integer(35));
  EXPECT_EQ(Eval("local n = 0 for k in pairs(string) do n = n + 1 end return n"),
            KvReply::Integer(15));
  EXPECT_EQ(Eval("local n = 0 table.foreach(math, function() n = n + 1 end) return n"),
            KvReply::Integer(31));
  EXPECT_EQ(Eval("return {rawequal(string, getmetatable('').__index), getmetatable(string) == "
                 "nil, type(getmetatable(_G).__index), #_G, ('x'):upper()}"),
            KvReply::Array({KvReply::Integer(1), KvReply::Integer(1), KvReply::Bulk("function"),
                            KvReply::Integer(0), KvReply::Bulk("X")}));
  EXPECT_EQ(Eval("return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM, redis.REPL_ALL, "
                 "tostring(redis.breakpoint())}"),
            KvReply::Array({KvReply::Bulk("7.0.15"), KvReply::Integer(458767), KvReply::Integer(3),
                            KvReply::Bulk("false")}));
  // Redis's pcall gives an error reply's text, not its table.
  EXPECT_EQ(Eval("local ok, e = pcall(redis.call, 'GET') return {tostring(ok), e}"),
            KvReply::Array({KvReply::Bulk("false"),
                            KvReply::Bulk("ERR Wrong number of args calling Redis command from "
                                          "script")}));
  // Tables a script makes are its own.
  EXPECT_EQ(Eval("local t = setmetatable({}, {__index = _G}) rawset(t, 'a', 1) "
                 "table.insert(t, 5) return {t.a, t[1], type(t.redis)}"),
            KvReply::Array({KvReply::Integer(1), KvReply::Integer(5), KvReply::Bulk("table")}));
}

// The budget's end cannot be caught: each of these ran for ever (a pcall, an xpcall or a
// coroutine catching it, load's reader looping in C), and now ends in the budget's error.
TEST(LuaScriptingBudget, NoScriptCatchesTheEndOfItsBudget) {
  LuaScripting lua([](std::span<const std::string>) { return KvReply::Nil(); }, 5'000'000);
  for (const char* script : {
           "while true do pcall(function() while true do end end) end",
           "while true do xpcall(function() while true do end end, function(e) return e end) end",
           "while true do coroutine.resume(coroutine.create(function() while true do end end)) end",
           "local function f() pcall(f) pcall(f) end while true do pcall(f) end",
           "while true do pcall(string.rep, 'x', 10) end",
           "local n = 0 while true do load(function() n = n + 1 return 'x' end) end",
           "return load(function() return '5' end)",
       }) {
    const auto start = ThreadCpuTime();
    const KvReply r = lua.Run(lua.Load(script).text, {}, {});
    EXPECT_TRUE(r.is_error() &&
                r.text.find("exceeded its budget of 5000000 instructions") != std::string::npos)
        << script << ": " << r.text;
    EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(5)) << script;
    EXPECT_EQ(lua.Run(lua.Load("return 1").text, {}, {}), KvReply::Integer(1)) << "and goes on";
  }
}

// Pattern matching runs in C, where no instruction is counted: its steps are taken from the
// budget, and a pattern nests at most 200 items deep (Lua 5.1 recursed until the stack broke).
TEST(LuaScriptingBudget, PatternMatchingIsBoundedByTheBudget) {
  LuaScripting lua([](std::span<const std::string>) { return KvReply::Nil(); }, 5'000'000);
  for (const char* script : {
           "return string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')",
           "return string.match(string.rep('a', 5000), '.-.-.-.-b')",
           "return string.gsub(string.rep('a', 3000), '.-.-.-b', '')",
           "for m in string.gmatch(string.rep('a', 3000), '.-.-.-b') do end",
           "return string.find(string.rep('a', 200000), string.rep('a', 100000) .. 'b', 1, true)",
           "return string.find(string.rep('(', 100000), '%b()')",
           // a long replacement at every place of a long subject: copied in C
           "local s = string.rep('x', 20000) return #string.gsub(s, '', s)",
           "local s = string.rep('x', 20000) for i = 1, 100 do s = s:rep(2):sub(1, 3e7) end",
       }) {
    const auto start = ThreadCpuTime();
    const KvReply r = lua.Run(lua.Load(script).text, {}, {});
    EXPECT_TRUE(r.is_error() && r.text.find("exceeded its budget") != std::string::npos)
        << script << ": " << r.text;
    EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(5)) << script;
  }
  const KvReply deep = lua.Run(
      lua.Load("return string.find(string.rep('a', 300), string.rep('a?', 300))").text, {}, {});
  EXPECT_TRUE(deep.is_error() && deep.text.find("pattern too complex") != std::string::npos)
      << deep.text;
  // What a limiter's script matches runs as before.
  EXPECT_EQ(lua.Run(lua.Load("local a, b = string.match('user:42:/api', '^(%w+):(%d+):') "
                             "return {a, b, (string.gsub('a.b.c', '%.', '/'))}")
                        .text,
                    {}, {}),
            KvReply::Array({KvReply::Bulk("user"), KvReply::Bulk("42"), KvReply::Bulk("a/b/c")}));
}

// JSON nested past lua-cjson's limit is refused as it is read, before it is built: a decode of
// ten million '[' once built them all outside the state's memory cap.
TEST_F(LuaScriptingTest, CjsonRefusesNestingPastItsLimitBeforeBuildingIt) {
  const auto start = ThreadCpuTime();
  EXPECT_TRUE(StartsWith(Eval("return cjson.decode(string.rep('[', 10000000))"),
                         "ERR user_script:1: Found too many nested data structures (1001) at "
                         "character 1001"));
  EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(2));
  EXPECT_TRUE(StartsWith(Eval("return cjson.decode('{\"a\":' .. string.rep('[', 1000))"),
                         "ERR user_script:1: Found too many nested data structures (1001) at "
                         "character 1005"));
  EXPECT_EQ(Eval("return cjson.encode(cjson.decode(string.rep('[', 1000) .. '1' .. "
                 "string.rep(']', 1000)))"),
            KvReply::Bulk(std::string(1000, '[') + "1" + std::string(1000, ']')));
  EXPECT_EQ(Eval("local t = cjson.decode('{\"a\":[1,2,{\"b\":null}],\"c\":\"d\"}') "
                 "return {t.a[2], t.a[3].b == cjson.null, t.c}"),
            KvReply::Array({KvReply::Integer(2), KvReply::Integer(1), KvReply::Bulk("d")}));
}

}  // namespace
}  // namespace ratelab
