// Scripts built from what Redis gives a script: its documented commands through redis.call and
// redis.pcall, and every function of the bundled libraries (cjson, cmsgpack, struct, bit), of
// string (the patterns among them), table and math, and the ways past the sandbox (loadstring,
// load, rawset, setmetatable, globals), each with arguments drawn from the input: strings of any
// bytes, numbers at their edges (the smallest int32, 2^53, NaN, infinities), nested tables. Each
// script runs on MemoryKv (EVAL) under a small budget, twice (the second sees what the first
// left), and must end in a reply: never a crash, never memory read or written out of bounds
// (AddressSanitizer), never an error from MemoryKv itself.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/store/lua_scripting.h"
#include "impl/store/memory_kv.h"

namespace {

// Builds one script from the input.
class ScriptBuilder {
 public:
  explicit ScriptBuilder(FuzzedDataProvider& in) : in_(in) {}

  std::string Build() {
    std::string script = "local out = {}\nlocal K = KEYS[1]\n";
    const int statements = in_.ConsumeIntegralInRange(1, 12);
    for (int i = 0; i < statements && in_.remaining_bytes() > 0; ++i) {
      const std::string call = Call(0);
      // Most in a pcall, so that the script goes on past an error; some bare, so that an error
      // ends it.
      if (in_.ConsumeIntegralInRange(0, 4) == 0) {
        script += "out[#out + 1] = " + call + "\n";
      } else {
        script += "out[#out + 1] = {pcall(function() return " + call + " end)}\n";
      }
    }
    return script + "return out\n";
  }

 private:
  // A Lua string literal holding `bytes` exactly (each as a decimal escape).
  static std::string Quoted(const std::string& bytes) {
    std::string out = "\"";
    for (const char c : bytes) out += "\\" + std::to_string(static_cast<unsigned char>(c));
    return out + "\"";
  }

  std::string String() {
    switch (in_.ConsumeIntegralInRange(0, 7)) {
      case 0:
        return Quoted(in_.ConsumeRandomLengthString(64));
      case 1:  // JSON, MessagePack, or a pattern, made by another call
        return "tostring(" + Call(depth_ + 1) + ")";
      case 2:
        return "string.rep(" + Quoted(in_.ConsumeRandomLengthString(4)) + ", " +
               std::to_string(in_.ConsumeIntegralInRange(0, 2000)) + ")";
      case 3:
        return in_.PickValueInArray<const char*>(
            {"\"{\\\"a\\\":[1,2,{\\\"b\\\":null}]}\"", "\"[1,2,3]\"", "\"%d+\"", "\"(%w+)=(%w*)\"",
             "\"%b()\"", "\"%f[%w]%w+\"", "\"[^,]+\"", "\"x*y*z*\"", "\"^(.-)$\"", "\"i4I2c3\"",
             "\">lLc1\"", "\"!4bic0\"", "\"bBx!8Ts\"", "\"\\145\\145\\1\"", "\"\\220\\255\\255\""});
      case 4:
        return "K";
      case 5:
        return "ARGV[" + std::to_string(in_.ConsumeIntegralInRange(1, 3)) + "]";
      case 6:
        return "string.dump(function() return 1 end)";
      default:
        return Quoted(in_.ConsumeBytesAsString(in_.ConsumeIntegralInRange(0, 8)));
    }
  }

  std::string Number() {
    switch (in_.ConsumeIntegralInRange(0, 3)) {
      case 0:
        return std::to_string(in_.ConsumeIntegral<int32_t>());
      case 1:
        return std::to_string(in_.ConsumeIntegralInRange(-5, 40));
      case 2:
        return in_.PickValueInArray<const char*>(
            {"-2147483648", "2147483647", "2^53", "-2^63", "2^64", "1e308", "-1e308", "(0/0)",
             "(1/0)", "(-1/0)", "-0", "0.5", "-2.5", "4294967296.5", "1e-300"});
      default:
        return std::to_string(in_.ConsumeFloatingPoint<double>());
    }
  }

  std::string Value() {
    if (depth_ > 3) return Number();
    switch (in_.ConsumeIntegralInRange(0, 5)) {
      case 0:
        return String();
      case 1:
        return Number();
      case 2: {  // an array, or a table nested in itself a few levels
        ++depth_;
        std::string t = "{";
        const int n = in_.ConsumeIntegralInRange(0, 4);
        for (int i = 0; i < n; ++i) t += (i > 0 ? ", " : "") + Value();
        --depth_;
        return t + "}";
      }
      case 3: {
        ++depth_;
        const std::string t = "{a = " + Value() + ", [" + Number() + "] = " + Value() + "}";
        --depth_;
        return t;
      }
      case 4:
        return in_.PickValueInArray<const char*>({"true", "false", "nil", "cjson.null"});
      default:
        return "(function() local t = {} for i = 1, " +
               std::to_string(in_.ConsumeIntegralInRange(0, 30)) +
               " do t = {t} end return t end)()";
    }
  }

  std::string RedisCall() {
    const char* command = in_.PickValueInArray<const char*>(
        {"GET",    "SET",      "INCR",     "INCRBY",  "DECRBY",        "INCRBYFLOAT",
         "APPEND", "SETRANGE", "GETRANGE", "STRLEN",  "DEL",           "EXISTS",
         "EXPIRE", "PEXPIRE",  "TTL",      "PTTL",    "PERSIST",       "TYPE",
         "COPY",   "RENAME",   "HSET",     "HGET",    "HGETALL",       "HINCRBY",
         "HDEL",   "HLEN",     "ZADD",     "ZRANGE",  "ZRANGEBYSCORE", "ZREMRANGEBYSCORE",
         "ZCARD",  "ZSCORE",   "ZINCRBY",  "ZPOPMIN", "LPUSH",         "RPUSH",
         "LPOP",   "LRANGE",   "LTRIM",    "LSET",    "LINSERT",       "LPOS",
         "SADD",   "SREM",     "SMEMBERS", "SINTER",  "SPOP",          "SRANDMEMBER",
         "TIME",   "DBSIZE",   "KEYS",     "SCAN",    "EVAL",          "NOPE"});
    std::string call =
        std::string(in_.ConsumeBool() ? "redis.call" : "redis.pcall") + "('" + command + "', K";
    const int args = in_.ConsumeIntegralInRange(0, 4);
    for (int i = 0; i < args; ++i) call += ", " + (in_.ConsumeBool() ? String() : Number());
    return call + ")";
  }

  std::string Call(int depth) {
    // Deep enough: a plain string (String() may build a call again, one level further each time).
    if (depth > 2) return Quoted(in_.ConsumeRandomLengthString(64));
    const int saved = depth_;
    depth_ = depth;
    std::string c;
    switch (in_.ConsumeIntegralInRange(0, 17)) {
      case 0:
      case 1:
        c = RedisCall();
        break;
      case 2:
        c = "cjson.encode(" + Value() + ")";
        break;
      case 3:
        c = "cjson.decode(" + String() + ")";
        break;
      case 4:
        c = "cmsgpack.pack(" + Value() + ", " + Value() + ")";
        break;
      case 5:
        c = std::string(in_.PickValueInArray<const char*>(
                {"cmsgpack.unpack(", "cmsgpack.unpack_one(", "cmsgpack.unpack_limit("})) +
            String() + ", " + Number() + ", " + Number() + ")";
        break;
      case 6:
        c = std::string(in_.PickValueInArray<const char*>(
                {"struct.pack(", "struct.unpack(", "struct.size("})) +
            String() + ", " + (in_.ConsumeBool() ? Number() : String()) + ", " + Number() + ")";
        break;
      case 7:
        c = std::string("bit.") +
            in_.PickValueInArray<const char*>({"tohex", "band", "bor", "bxor", "lshift", "rshift",
                                               "arshift", "rol", "ror", "bnot", "tobit", "bswap"}) +
            "(" + Number() + ", " + Number() + ")";
        break;
      case 8:
      case 9:
        c = std::string("string.") +
            in_.PickValueInArray<const char*>({"find", "match", "gsub", "gmatch", "format", "rep",
                                               "sub", "byte", "char", "upper", "len", "reverse"}) +
            "(" + String() + ", " + String() + ", " + (in_.ConsumeBool() ? Number() : String()) +
            ")";
        break;
      case 10:
        c = std::string("table.") +
            in_.PickValueInArray<const char*>(
                {"concat", "insert", "remove", "sort", "getn", "maxn", "foreach"}) +
            "(" + in_.PickValueInArray<const char*>({"{3, 1, 2}", "out", "string", "_G", "KEYS"}) +
            ", " + Value() + ")";
        break;
      case 11:
        c = std::string("math.") +
            in_.PickValueInArray<const char*>(
                {"floor", "fmod", "pow", "random", "randomseed", "frexp", "ldexp", "max"}) +
            "(" + Number() + ", " + Number() + ")";
        break;
      case 12:
        c = std::string(in_.PickValueInArray<const char*>({"loadstring(",
                                                           "load(function() "
                                                           "return nil end, "})) +
            String() + ")";
        break;
      case 13:
        c = std::string(in_.PickValueInArray<const char*>(
                {"rawset(_G, ", "rawset(string, ", "rawget(_G, ", "setmetatable(_G, ",
                 "getmetatable(", "rawequal(_G, ", "next(_G, ", "select(2, ", "unpack({1}, ",
                 "tonumber(", "tostring(", "type(", "assert("})) +
            Value() + ", " + Value() + ")";
        break;
      case 14:
        c = std::string(in_.PickValueInArray<const char*>({"redis.sha1hex(", "redis.error_reply(",
                                                           "redis.status_reply(", "redis.log(1, ",
                                                           "redis.setresp(", "error("})) +
            String() + ")";
        break;
      case 15:
        c = "coroutine.wrap(function() return " + Call(depth + 1) + " end)()";
        break;
      case 16:
        c = "(function() x_" + std::to_string(in_.ConsumeIntegralInRange(0, 3)) + " = " + Value() +
            " return x_0 end)()";  // globals: refused
        break;
      default:
        c = "select('#', " + Call(depth + 1) + ", " + Call(depth + 1) + ")";
        break;
    }
    depth_ = saved;
    return c;
  }

  FuzzedDataProvider& in_;
  int depth_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string script = ScriptBuilder(in).Build();
  // To see the script an input builds (a crash's, to reproduce it on redis-server):
  // RATELAB_FUZZ_PRINT=1 fuzz_lua_script CRASH_FILE.
  if (std::getenv("RATELAB_FUZZ_PRINT") != nullptr) std::fprintf(stderr, "%s", script.c_str());
  ratelab::ManualClock clock(ratelab::FromUnixNanos(1'767'225'600'123'456'789));
  // The states of one cache, each made new for the next input as a check's stores take them
  // (LuaScripting::Renew): ten times the inputs a second of a state made each time.
  static const auto cache = std::make_shared<ratelab::LuaCache>();
  ratelab::MemoryKv kv(clock, ratelab::Durability::kAlways, 200'000,  // endless loops end soon
                       cache);
  kv.SetDataCap(16 << 20);
  const std::vector<std::string> eval = {"EVAL", script, "1", "rl:{u1}", "10", "60000", "x"};
  for (int call = 0; call < 2; ++call) {
    const ratelab::Result<ratelab::KvReply> reply = kv.Execute(eval);
    if (!reply.ok()) __builtin_trap();  // MemoryKv always answers, an error reply at worst
    clock.Advance(std::chrono::milliseconds(1500));
  }
  return 0;
}
