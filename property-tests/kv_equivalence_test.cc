// MemoryKv is a simulation of Redis; this shows it answers as a real redis-server does. Random
// sequences of commands and scripts (the limiters' own scripts among them) over a few keys, with
// virtual time moving between them, run on both, on the same virtual clock (the server runs on
// it through virtual_time_shim), and every reply must be identical. A difference shrinks to the
// shortest sequence that shows it.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/limiters/kv_fixed_window_lua.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/limiters/kv_lua_limiters.h"
#include "impl/store/memory_kv.h"
#include "impl/store/redis_kv.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

using Argv = std::vector<std::string>;

constexpr int64_t kStartMs = 1'800'000'000'000;  // 2027-01-15, on a whole second

// The clock as the command runs, in unix ms or µs: a script argument the limiters pass.
constexpr char kNowMs[] = "{now_ms}";
constexpr char kNowUs[] = "{now_us}";
// Instants near the clock for EXPIREAT and PEXPIREAT: in unix seconds, then ms.
constexpr char kPastS[] = "{now_s-1}";
constexpr char kSoonS[] = "{now_s+1}";
constexpr char kPastMs[] = "{now_ms-5}";
constexpr char kSoonMs[] = "{now_ms+5}";

// One step of a sequence: move the clock on, then run a command (kNowMs and kNowUs words
// replaced by the time then).
struct KvOp {
  int64_t advance_ms = 0;
  Argv argv;
};

std::string Describe(const std::vector<KvOp>& ops, size_t upto) {
  std::string out;
  int64_t t = 0;
  for (size_t i = 0; i <= upto && i < ops.size(); ++i) {
    t += ops[i].advance_ms;
    out += "\n  +" + std::to_string(t) + "ms";
    for (const std::string& a : ops[i].argv)
      out += " " + (a.size() > 40 ? a.substr(0, 37) + "..." : a);
  }
  return out;
}

rc::Gen<std::string> Key() { return rc::gen::element<std::string>("a", "b", "c"); }
// A list index or count: in range, past either end, negative, or not a number.
rc::Gen<std::string> Index() {
  return rc::gen::element<std::string>("0", "1", "2", "-1", "-2", "5", "-5", "x", "1.5");
}
rc::Gen<std::string> Field() { return rc::gen::element<std::string>("f", "g", "tokens"); }
// A set's member: integers (which an intset holds) and not ("01" and "-0" are not integers to
// Redis).
rc::Gen<std::string> Member() {
  return rc::gen::element<std::string>("1", "-2", "10", "x", "f", "01", "-0", "");
}
rc::Gen<std::string> Number() {
  return rc::gen::element<std::string>("0", "1", "-1", "7", "100", "x", "", "1.5", "01", " 1",
                                       "9223372036854775807", "-9223372036854775808", "+2");
}
rc::Gen<std::string> Score() {
  return rc::gen::element<std::string>("1", "2", "2.5", "-inf", "+inf", "0", "-0", "1e3", "x",
                                       "3.0000000000000004", "(1");
}
rc::Gen<std::string> Bound() {
  return rc::gen::element<std::string>("-inf", "+inf", "1", "(1", "2.5", "(2.5", "0", "x", "((1");
}
// An INCRBYFLOAT increment or a value it reads. (Not so large that its text passes 64 bytes:
// Redis then keeps the hash as a hash table, whose order MemoryKv does not reproduce.)
rc::Gen<std::string> Float() {
  return rc::gen::element<std::string>("1.5", "0.1", "-2", "1e3", "10.50", "x", "", " 1", "inf",
                                       "3.0000000000000004", "7", "-0", "1e30", "1e5000");
}
rc::Gen<std::string> At() {
  return rc::gen::element<std::string>(kPastS, kSoonS, kPastMs, kSoonMs, "x", "0");
}
rc::Gen<std::string> Ms() {
  return rc::gen::element<std::string>("1", "2", "5", "100", "0", "-5", "x", "9223372036854775807");
}

// Optional words drawn independently, in the order given.
rc::Gen<Argv> Options(std::vector<std::string> words) {
  return rc::gen::exec([words] {
    Argv out;
    for (const std::string& w : words) {
      if (*rc::gen::inRange(0, 4) == 0) out.push_back(w);
    }
    return out;
  });
}

Argv Concat(Argv a, const Argv& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The commands drawn by both properties: the broad one, and the one of the newer commands, which
// draws each often enough to meet the states they differ on.
rc::Gen<Argv> LPos() {
  return rc::gen::exec([] {
    Argv a = {"LPOS", *Key(), *Number()};
    const auto option = [&](const std::string& name, std::vector<std::string> values) {
      if (*rc::gen::inRange(0, 3) == 0) {
        a = Concat(a, {name, *rc::gen::elementOf(values)});
      }
    };
    option(*rc::gen::element<std::string>("RANK", "rank"), {"1", "2", "-1", "-3", "0", "x"});
    option("COUNT", {"0", "1", "2", "-1"});
    option("MAXLEN", {"0", "2", "-1"});
    if (*rc::gen::inRange(0, 8) == 0) a.push_back("COUNT");  // a word without its value
    return a;
  });
}
// Intersections, unions and differences of intsets as they come (in numeric order).
rc::Gen<Argv> SetAlgebra() {
  return rc::gen::exec([] {
    return Argv{*rc::gen::element<std::string>("SINTER", "SUNION", "SDIFF"), "ints:" + *Key(),
                "ints:" + *Key()};
  });
}
// The same of any sets, sorted (a hash table's order is its own).
rc::Gen<Argv> SetAlgebraSorted() {
  return rc::gen::exec([] {
    return Argv{"EVAL",
                "local m = redis.call(ARGV[1], KEYS[1], KEYS[2], KEYS[3])\n"
                "table.sort(m)\n"
                "return m",
                "3",
                *Key(),
                *rc::gen::element<std::string>("ints:a", "b"),
                *Key(),
                *rc::gen::element<std::string>("SINTER", "SUNION", "SDIFF")};
  });
}
rc::Gen<Argv> ZAddIncr() {
  return rc::gen::exec([] {
    Argv a = Concat(Concat({"ZADD", *Key()}, *Options({"NX", "XX", "GT", "LT", "CH"})),
                    {"INCR", *Score(), *Field()});
    if (*rc::gen::inRange(0, 6) == 0) a = Concat(a, {*Score(), *Field()});  // one pair only
    return a;
  });
}
// ZRANGE by score, either way, with or without a limit and the scores; and its older forms.
rc::Gen<Argv> ZRangeByScore() {
  return rc::gen::exec([] {
    Argv a = {*rc::gen::element<std::string>("ZRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), *Key(),
              *Bound(), *Bound()};
    if (a[0] == "ZRANGE") a = Concat(a, *Options({"BYSCORE", "REV", "rev"}));
    if (*rc::gen::inRange(0, 3) == 0) a = Concat(a, {"LIMIT", *Index(), *Index()});
    return Concat(a, *Options({"WITHSCORES"}));
  });
}
// Ranges of members: ZRANGE BYLEX either way and its older forms, ZLEXCOUNT and ZREMRANGEBYLEX,
// over sets of one score (what they are meant for) and of several (where Redis's answer follows
// its listpack, which sets this small are).
rc::Gen<std::string> LexBound() {
  return rc::gen::element<std::string>("-", "+", "[f", "(f", "[g", "(g", "[tokens", "(tokens", "[t",
                                       "(a", "[", "(", "f", "", "+x", "-f", "[z");
}
rc::Gen<Argv> LexRange() {
  return rc::gen::exec([] {
    Argv a = {*rc::gen::element<std::string>("ZRANGE", "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT",
                                             "ZREMRANGEBYLEX"),
              *rc::gen::element<std::string>("one:a", "one:b", "a", "b"), *LexBound(), *LexBound()};
    if (a[0] == "ZLEXCOUNT" || a[0] == "ZREMRANGEBYLEX") return a;
    if (a[0] == "ZRANGE") {
      a.push_back(*rc::gen::element<std::string>("BYLEX", "bylex"));
      a = Concat(a, *Options({"REV"}));
    }
    if (*rc::gen::inRange(0, 3) == 0) a = Concat(a, {"LIMIT", *Index(), *Index()});
    if (*rc::gen::inRange(0, 10) == 0) a.push_back("WITHSCORES");
    return a;
  });
}
// Members of one score for the "one:" sets.
rc::Gen<Argv> ZAddOneScore() {
  return rc::gen::exec([] {
    return Argv{"ZADD", *rc::gen::element<std::string>("one:a", "one:b"), "0",
                *rc::gen::element<std::string>("f", "g", "tokens", "", "a", "t", "ff", "\xff")};
  });
}
// KEYS and SCAN: a key's name matched by a glob; in a script that sorts them where several may
// match (their order is Redis's own), as they are where at most one can.
rc::Gen<std::string> Glob() {
  return rc::gen::element<std::string>("*", "a", "?", "[ab]", "[^a]*", "ints:*", "*:*", "[b-a]",
                                       "\\a", "[", "a*b*", "", "[a-", "*[!c]", "i*s?a");
}
rc::Gen<Argv> KeysAndScan() {
  return rc::gen::oneOf(
      rc::gen::exec([] {
        return Argv{"EVAL", "local m = redis.call('KEYS', ARGV[1]) table.sort(m) return m", "0",
                    *Glob()};
      }),
      rc::gen::exec([] {
        Argv a = {"EVAL", "local r = redis.call('SCAN', unpack(ARGV)) table.sort(r[2]) return r",
                  "0", "0"};
        if (*rc::gen::inRange(0, 2) == 0) a = Concat(a, {"MATCH", *Glob()});
        if (*rc::gen::inRange(0, 3) == 0) a = Concat(a, {"COUNT", "100"});
        if (*rc::gen::inRange(0, 3) == 0) {
          a = Concat(a, {"TYPE", *rc::gen::element<std::string>("string", "ZSET", "set", "x")});
        }
        return a;
      }),
      rc::gen::exec([] {  // at most one key matches, or the call fails: the reply as it comes
        Argv a = {"SCAN", *rc::gen::element<std::string>("0", "", "x", " 0", "+0")};
        a = Concat(a, {"MATCH", *rc::gen::element<std::string>("a", "ints:b", "none")});
        if (*rc::gen::inRange(0, 2) == 0) {
          a = Concat(a, {*rc::gen::element<std::string>("COUNT", "count", "LIMIT"),
                         *rc::gen::element<std::string>("10", "0", "x")});
        }
        return a;
      }));
}
// SSCAN (of intsets, and of any set sorted), HSCAN and ZSCAN: small collections, scanned whole.
rc::Gen<Argv> CollectionScan() {
  const auto rest = [](Argv a) {
    if (*rc::gen::inRange(0, 2) == 0) {
      a = Concat(a, {"MATCH", *rc::gen::element<std::string>("*", "f*", "?", "[fg]", "1*", "x")});
    }
    if (*rc::gen::inRange(0, 4) == 0) {
      a = Concat(a, {*rc::gen::element<std::string>("COUNT", "TYPE"),
                     *rc::gen::element<std::string>("10", "0", "x")});
    }
    return a;
  };
  const auto cursor = [] { return *rc::gen::element<std::string>("0", "", "x", "7", "-0"); };
  return rc::gen::oneOf(
      rc::gen::exec([rest, cursor] {
        return rest({*rc::gen::element<std::string>("HSCAN", "ZSCAN"), *Key(), cursor()});
      }),
      rc::gen::exec([rest, cursor] {
        return rest({"SSCAN", "ints:" + *Key(), cursor()});
      }),
      rc::gen::exec([rest] {  // a hash table: a cursor not 0 resumes Redis's own order
        return Concat({"EVAL",
                       "local r = redis.call('SSCAN', unpack(ARGV)) table.sort(r[2]) "
                       "return r",
                       "0"},
                      rest({*Key(), *rc::gen::element<std::string>("0", "", "x")}));
      }));
}
// SPOP, SRANDMEMBER and HRANDFIELD where what they draw is not left to chance: a count that takes
// the whole collection, a count of 0, a bad count; and any draw from a collection of one ("one:"
// keys, always given the same member).
rc::Gen<Argv> RandomDraws() {
  const auto count = [](const std::string& command) {
    return command == "SPOP" ? *rc::gen::element<std::string>("10", "0", "x", "-3")
                             : *rc::gen::element<std::string>("10", "0", "x");
  };
  return rc::gen::oneOf(
      rc::gen::exec([count] {  // an intset, listed in numeric order
        const std::string command = *rc::gen::element<std::string>("SPOP", "SRANDMEMBER");
        return Argv{command, "ints:" + *Key(), count(command)};
      }),
      rc::gen::exec([count] {  // any set, sorted (a hash table's order is its own)
        const std::string command = *rc::gen::element<std::string>("SPOP", "SRANDMEMBER");
        return Argv{"EVAL",
                    "local r = redis.call(ARGV[1], KEYS[1], ARGV[2])\n"
                    "if type(r) == 'table' then table.sort(r) end\n"
                    "return r",
                    "1",
                    *Key(),
                    command,
                    count(command)};
      }),
      rc::gen::exec([] {
        Argv a = {*rc::gen::element<std::string>("SPOP", "SRANDMEMBER"), "one:s"};
        if (*rc::gen::inRange(0, 2) == 0) a.push_back(*rc::gen::element<std::string>("1", "-2"));
        if (*rc::gen::inRange(0, 8) == 0) a.push_back("x");  // one word too many
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"SADD", "one:s", "m"};
      }),
      rc::gen::exec([] {
        return Argv{"HSET", "one:h", "f", *Number()};
      }),
      rc::gen::exec([] {
        Argv a = {"HRANDFIELD", *rc::gen::element<std::string>("one:h", "a", "b")};
        const std::string count = *rc::gen::element<std::string>("", "10", "0", "x");
        if (a[1] == "one:h" && count.empty()) return a;
        a.push_back(count.empty() ? "10" : count);
        if (*rc::gen::inRange(0, 2) == 0) {
          a.push_back(*rc::gen::element<std::string>("WITHVALUES", "withvalues", "x"));
        }
        return a;
      }));
}
rc::Gen<Argv> SetRange() {
  return rc::gen::exec([] {
    return Argv{"SETRANGE", *Key(), *rc::gen::element<std::string>("0", "2", "5", "-1", "x"),
                *rc::gen::element<std::string>("ab", "", "7")};
  });
}
rc::Gen<Argv> Copy() {
  return rc::gen::exec([] {
    Argv a = Concat({"COPY", *Key(), *Key()}, *Options({"REPLACE"}));
    if (*rc::gen::inRange(0, 8) == 0) a.push_back(*rc::gen::element<std::string>("DB", "x"));
    return a;
  });
}

// A command a limiter (or a user's script) might send.
rc::Gen<Argv> Command() {
  using rc::gen::just;
  const std::string now = kNowMs;
  const std::string now_us = kNowUs;
  return rc::gen::oneOf(
      // strings
      rc::gen::exec([] {
        return Argv{"GET", *Key()};
      }),
      rc::gen::exec([] {
        Argv a = {"SET", *Key(), *Number()};
        a = Concat(a, *Options({"NX", "XX", "GET"}));
        switch (*rc::gen::inRange(0, 5)) {
          case 0:
            a = Concat(a, {"PX", *Ms()});
            break;
          case 1:
            a = Concat(a, {"EX", *Ms()});
            break;
          case 2:
            a.push_back("KEEPTTL");
            break;
          default:
            break;
        }
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"INCR", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"INCRBY", *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"DECR", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"DECRBY", *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"INCRBYFLOAT", *Key(), *Float()};
      }),
      rc::gen::exec([] {
        return Argv{"SET", *Key(), *Float()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SETEX", "PSETEX"), *Key(), *Ms(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"GETSET", *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"GETDEL", *Key()};
      }),
      rc::gen::exec([] {
        Argv a = {"SET", *Key(), *Number(), *rc::gen::element<std::string>("EXAT", "PXAT"), *At()};
        return Concat(a, *Options({"GET"}));
      }),
      rc::gen::exec([] {
        return Argv{"RENAME", *Key(), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"MGET", *Key(), *Key(), *Key()};
      }),
      rc::gen::exec([] {
        Argv a = {"MSET", *Key(), *Number()};
        if (*rc::gen::inRange(0, 2) == 0) a = Concat(a, {*Key(), *Number()});
        if (*rc::gen::inRange(0, 4) == 0) a.push_back(*Key());  // an odd count
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"SETNX", *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"STRLEN", *Key()};
      }),
      SetRange(), Copy(), rc::gen::exec([] {
        return Argv{"APPEND", *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"UNLINK", *Key(), *Key()};
      }),
      // keys
      rc::gen::exec([] {
        return Argv{"DEL", *Key(), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"EXISTS", *Key(), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"TYPE", *Key()};
      }),
      rc::gen::exec([] {
        return Concat({*rc::gen::element<std::string>("EXPIRE", "PEXPIRE"), *Key(), *Ms()},
                      *Options({"NX", "XX", "GT", "LT"}));
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("TTL", "PTTL"), *Key()};
      }),
      rc::gen::exec([] {
        return Concat({*rc::gen::element<std::string>("EXPIREAT", "PEXPIREAT"), *Key(), *At()},
                      *Options({"NX", "XX", "GT", "LT"}));
      }),
      rc::gen::exec([] {
        return Argv{"PERSIST", *Key()};
      }),
      // hashes
      rc::gen::exec([] {
        return Argv{"HGET", *Key(), *Field()};
      }),
      rc::gen::exec([] { return Argv{"HSET", *Key(), *Field(), *Number(), *Field(), *Number()}; }),
      rc::gen::exec([] {
        return Argv{"HMGET", *Key(), *Field(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{"HGETALL", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"HINCRBY", *Key(), *Field(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"HDEL", *Key(), *Field()};
      }),
      rc::gen::exec([] {
        Argv a = {"HMSET", *Key(), *Field(), *Number()};
        if (*rc::gen::inRange(0, 3) == 0) a.push_back(*Field());  // an odd count
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"HINCRBYFLOAT", *Key(), *Field(), *Float()};
      }),
      rc::gen::exec([] {
        return Argv{"HSET", *Key(), *Field(), *Float()};
      }),
      rc::gen::exec([] {
        return Argv{"HEXISTS", *Key(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{"HLEN", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"HSETNX", *Key(), *Field(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("HKEYS", "HVALS"), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"HSTRLEN", *Key(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{"GETRANGE", *Key(), *Index(), *Index()};
      }),
      rc::gen::exec([] {
        Argv a = {"GETEX", *Key()};
        const std::string option =
            *rc::gen::element<std::string>("", "EX", "PX", "EXAT", "PXAT", "PERSIST", "KEEPTTL");
        if (option == "EXAT")
          return Concat(a, {option, *rc::gen::element<std::string>(kPastS, kSoonS, "x")});
        if (option == "PXAT")
          return Concat(a, {option, *rc::gen::element<std::string>(kPastMs, kSoonMs, "0")});
        if (option == "EX" || option == "PX") return Concat(a, {option, *Ms()});
        if (!option.empty()) a.push_back(option);
        return a;
      }),
      rc::gen::exec([] {
        Argv a = {"MSETNX", *Key(), *Number()};
        if (*rc::gen::inRange(0, 2) == 0) a = Concat(a, {*Key(), *Number()});
        if (*rc::gen::inRange(0, 4) == 0) a.push_back(*Key());
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"RENAMENX", *Key(), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("EXPIRETIME", "PEXPIRETIME"), *Key()};
      }),
      // sets: members that are integers (Redis's intset, listed in numeric order) and others
      // (a hash table, listed in an order of its own: read sorted, as a script must)
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SADD", "SREM"), *Key(), *Member(), *Member()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SCARD", "SMEMBERS"), "ints:" + *Key()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SADD", "SREM"), "ints:" + *Key(),
                    *rc::gen::element<std::string>("1", "-5", "300", "70000", "9", "0"),
                    *rc::gen::element<std::string>("2", "-70000", "10", "5000000000")};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SISMEMBER", "SCARD"), *Key(), *Member()};
      }),
      rc::gen::exec([] {
        return Argv{"SMISMEMBER", *Key(), *Member(), *Member()};
      }),
      SetAlgebra(), SetAlgebraSorted(), rc::gen::exec([] {
        return Argv{"EVAL",
                    "local m = redis.call('SMEMBERS', KEYS[1])\n"
                    "table.sort(m)\n"
                    "return m",
                    "1", *Key()};
      }),
      // lists
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("LPUSH", "RPUSH"), *Key(), *Number(), *Number()};
      }),
      rc::gen::exec([] {
        Argv a = {*rc::gen::element<std::string>("LPOP", "RPOP"), *Key()};
        if (*rc::gen::inRange(0, 2) == 0) a.push_back(*Index());
        return a;
      }),
      rc::gen::exec([] {
        return Argv{"LLEN", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"LINDEX", *Key(), *Index()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("LRANGE", "LTRIM"), *Key(), *Index(), *Index()};
      }),
      rc::gen::exec([] {
        return Argv{"LSET", *Key(), *Index(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"LREM", *Key(), *Index(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"LINSERT", *Key(), *rc::gen::element<std::string>("BEFORE", "after", "x"),
                    *Number(), *Number()};
      }),
      rc::gen::exec([] {
        const auto end = [] { return *rc::gen::element<std::string>("LEFT", "right", "x"); };
        return Argv{"LMOVE", *Key(), *Key(), end(), end()};
      }),
      rc::gen::exec([] {
        return Argv{"RPOPLPUSH", *Key(), *Key()};
      }),
      LPos(),
      // sorted sets
      rc::gen::exec([] {
        return Concat(Concat({"ZADD", *Key()}, *Options({"NX", "XX", "GT", "LT", "CH"})),
                      {*Score(), *Field(), *Score(), *Field()});
      }),
      ZAddIncr(), ZRangeByScore(), KeysAndScan(), CollectionScan(), RandomDraws(),
      rc::gen::exec([] {
        return Argv{"ZREM", *Key(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{"ZREMRANGEBYSCORE", *Key(), *Bound(), *Bound()};
      }),
      rc::gen::exec([] {
        return Argv{"ZCARD", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"ZCOUNT", *Key(), *Bound(), *Bound()};
      }),
      rc::gen::exec([] {
        return Argv{"ZSCORE", *Key(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("ZRANK", "ZREVRANK"), *Key(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{"ZREMRANGEBYRANK", *Key(), *rc::gen::element<std::string>("0", "1", "-1", "-5"),
                    *rc::gen::element<std::string>("0", "-1", "2", "5")};
      }),
      rc::gen::exec([] {
        return Argv{"ZINCRBY", *Key(), *Score(), *Field()};
      }),
      rc::gen::exec([] {
        Argv a = {*rc::gen::element<std::string>("ZPOPMIN", "ZPOPMAX"), *Key()};
        if (*rc::gen::inRange(0, 2) == 0) a.push_back(*Index());
        return a;
      }),
      rc::gen::exec([] {
        return Concat({"ZREVRANGE", *Key(), *rc::gen::element<std::string>("0", "1", "-1"),
                       *rc::gen::element<std::string>("0", "-1", "5")},
                      *Options({"WITHSCORES"}));
      }),
      rc::gen::exec([] {
        return Concat({"ZRANGE", *Key(), *rc::gen::element<std::string>("0", "1", "-1"),
                       *rc::gen::element<std::string>("0", "-1", "5")},
                      *Options({"WITHSCORES"}));
      }),
      rc::gen::exec([] {
        Argv a = {"ZRANGEBYSCORE", *Key(), *Bound(), *Bound()};
        a = Concat(a, *Options({"WITHSCORES"}));
        if (*rc::gen::inRange(0, 2) == 0) a = Concat(a, {"LIMIT", *Index(), *Index()});
        return a;
      }),
      // server
      just(Argv{"TIME"}), just(Argv{"DBSIZE"}),
      // the limiters' scripts, at expiry edges (TTLs of a few ms)
      rc::gen::exec([now_us] {
        return Argv{"EVAL",
                    KvGcraLua::Script().body,
                    "1",
                    *Key(),
                    now_us,
                    *rc::gen::element<std::string>("1000", "3000"),
                    *rc::gen::element<std::string>("1", "2"),
                    *rc::gen::element<std::string>("1", "2", "3"),
                    *rc::gen::element<std::string>("0", "2")};
      }),
      rc::gen::exec([] {
        return Argv{"EVAL",
                    KvFixedWindowLua::Script().body,
                    "1",
                    *Key(),
                    *rc::gen::element<std::string>("1", "2"),
                    *rc::gen::element<std::string>("1", "2"),
                    *rc::gen::element<std::string>("1", "3")};
      }),
      rc::gen::exec([now] {
        return Argv{"EVAL", KvTokenBucketLua::Script().body,
                    "1",    *Key(),
                    "2",    *rc::gen::element<std::string>("0.5", "0.1", "0.3333333333333333"),
                    now,    *rc::gen::element<std::string>("2", "5")};
      }),
      rc::gen::exec([now] {
        return Argv{"EVAL",
                    KvSlidingLogLua::Script().body,
                    "2",
                    *Key(),
                    *Key(),
                    *rc::gen::element<std::string>("1", "2"),
                    *rc::gen::element<std::string>("1", "2"),
                    now,
                    *rc::gen::element<std::string>("2", "3"),
                    *rc::gen::element<std::string>("3", "6")};
      }),
      // scripts that read the clock and convert replies both ways
      just(Argv{"EVAL", "return redis.call('TIME')", "0"}), rc::gen::exec([] {
        return Argv{"EVAL", "return {redis.call('PTTL', KEYS[1]), redis.call('TYPE', KEYS[1])}",
                    "1", *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"EVAL", "return redis.pcall('INCRBY', KEYS[1], ARGV[1])", "1", *Key(),
                    *Number()};
      }),
      rc::gen::exec([] {
        return Argv{"EVAL", "return {1.9, -2.5, 'x', true, false, {3}}", "0"};
      }),
      rc::gen::exec([] {
        return Argv{"EVAL", "return redis.call('HGETALL', KEYS[1])", "1", *Key()};
      }),
      // the libraries Redis gives scripts: state kept as JSON (on keys of its own: MemoryKv's
      // cjson reads strict JSON, where lua-cjson also takes "+2" or "0x10"), and bit operations
      rc::gen::exec([now] {
        return Argv{"EVAL",
                    "local s = redis.call('GET', KEYS[1])\n"
                    "local ok, t = pcall(cjson.decode, s or '{}')\n"
                    "if not ok then return redis.error_reply(t) end\n"
                    "if type(t) ~= 'table' then t = {v = t} end\n"
                    "t.tokens = (tonumber(t.tokens) or 0) + tonumber(ARGV[1])\n"
                    "t.ts = tonumber(ARGV[2])\n"
                    "t.key = KEYS[1] .. ':/api'\n"
                    "t.list = {1, 2.5, 'x', false}\n"
                    "redis.call('SET', KEYS[1], cjson.encode(t))\n"
                    "return cjson.encode(t)",
                    "1",
                    "json:" + *Key(),
                    *rc::gen::element<std::string>("1", "0.1", "-3", "1e20"),
                    now};
      }),
      rc::gen::exec([] {
        return Argv{
            "EVAL", "return cjson.encode(cjson.decode(ARGV[1]))", "0",
            *rc::gen::element<std::string>("[1,2,3]", "{\"a\":null}", "\"s\\/t\"", "1.5", "[]",
                                           "{}", "true", "\"\\u00e9\"", "12345678901234567")};
      }),
      rc::gen::exec([] {
        return Argv{"EVAL",
                    "return {bit.band(ARGV[1], ARGV[2]), bit.bor(ARGV[1], ARGV[2]), "
                    "bit.bxor(ARGV[1], ARGV[2]), bit.lshift(ARGV[1], ARGV[2]), "
                    "bit.rshift(ARGV[1], ARGV[2]), bit.arshift(ARGV[1], ARGV[2]), "
                    "bit.rol(ARGV[1], ARGV[2]), bit.bnot(ARGV[1]), bit.tobit(ARGV[1]), "
                    "bit.tohex(ARGV[1]), bit.tohex(ARGV[1], -4), bit.bswap(ARGV[1])}",
                    "0",
                    *rc::gen::element<std::string>("0", "1", "-1", "255", "4294967296.5",
                                                   "2147483648", "3.5", "-2.5"),
                    *rc::gen::element<std::string>("0", "1", "4", "31", "33")};
      }),
      // cmsgpack: state kept packed, every kind of value (integers of each width, floats and
      // doubles, strings of each length class, arrays, maps, nesting past the limit), read back
      rc::gen::exec([now] {
        return Argv{"EVAL",
                    "local s = redis.call('GET', KEYS[1])\n"
                    "local t = s and cmsgpack.unpack(s) or {n = 0}\n"
                    "t.n = t.n + tonumber(ARGV[1])\n"
                    "t.ts = tonumber(ARGV[2])\n"
                    "t.list = {1, -1, -33, 200, -200, 70000, -70000, 5000000000, -5000000000, "
                    "0.5, 0.1, 1e300, 'x', string.rep('y', 40), string.rep('z', 300), true, "
                    "false, {}, {a = {b = {c = 1}}}}\n"
                    "local deep = {}\n"
                    "for i = 1, 20 do deep = {deep} end\n"
                    "t.deep = deep\n"
                    "local packed = cmsgpack.pack(t)\n"
                    "redis.call('SET', KEYS[1], packed)\n"
                    "return {packed, cmsgpack.pack(1, 'two', {3}), "
                    "{cmsgpack.unpack_one(cmsgpack.pack(7, 8))}, "
                    "{cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 2)}}",
                    "1",
                    "msgpack:" + *Key(),
                    *rc::gen::element<std::string>("1", "0.25", "-3", "1e20"),
                    now};
      }),
      rc::gen::exec([] {
        return Argv{
            "EVAL",
            "local ok, r = pcall(cmsgpack.unpack, ARGV[1])\n"
            "if not ok then return redis.error_reply(r) end\n"
            "return r",
            "0",
            *rc::gen::element<std::string>(std::string("\x92\x01", 2), std::string("\xc1", 1),
                                           std::string("\x93\x01\xa1x\xc3", 5))};
      }),
      // struct: packed fields of each width and order, with alignment, read back
      rc::gen::exec([] {
        return Argv{"EVAL",
                    "local fmt = ARGV[1]\n"
                    "local ok, packed = pcall(struct.pack, fmt, tonumber(ARGV[2]), "
                    "tonumber(ARGV[2]), 'abc')\n"
                    "if not ok then return redis.error_reply(packed) end\n"
                    "local size = (fmt:find('s') or fmt:find('c0')) and -1 or struct.size(fmt)\n"
                    "return {packed, size, {struct.unpack(fmt, packed)}}",
                    "0",
                    *rc::gen::element<std::string>(">i4I2c3", "<hHs", "!4bic0", ">lLc1", "<fdc2",
                                                   "bBx!8Ts", ">i3I7c0", "q"),
                    *rc::gen::element<std::string>("0", "1", "-1", "300", "-70000", "0.5")};
      }));
}

// Scripts that reach for what Redis's sandbox refuses or its bundled libraries once got wrong:
// the globals and libraries there are (each listed with its members), writes to them, bytecode,
// Redis's pcall, bit.tohex at the smallest integer (CVE-2024-31449), cjson past its nesting,
// cjson's settings, cmsgpack and struct at their bounds.
rc::Gen<Argv> SandboxScript() {
  const auto eval = [](std::string body) { return Argv{"EVAL", std::move(body), "0"}; };
  std::vector<Argv> scripts;
  for (const char* table : {"_G", "string", "math", "table", "coroutine", "cjson", "bit", "struct",
                            "cmsgpack", "redis"}) {
    scripts.push_back(eval(std::string("local t = {} for k, v in pairs(") + table +
                           ") do if k ~= 'REDIS_VERSION' and k ~= 'REDIS_VERSION_NUM' then "
                           "t[#t + 1] = k .. ':' .. type(v) end end table.sort(t) return t"));
  }
  for (const char* name : {"os", "io", "debug", "print", "getfenv", "setfenv", "newproxy", "dofile",
                           "loadfile", "require", "package", "module", "undefined"}) {
    scripts.push_back(eval(std::string("return type(") + name + ")"));
  }
  for (const char* body : {
           "x = 1 return 1",
           "KEYS = {} return 1",
           "KEYS[1] = 'x' return KEYS[1]",
           "string.foo = 1 return 1",
           "string.upper = nil return 1",
           "local s = string s.upper = nil return 1",
           "redis.call = nil return 1",
           "cjson.null = 1 return 1",
           "getmetatable('').__index = nil return 1",
           "rawset(_G, 'z', 1) return 1",
           "rawset(string, 'z', 1) return 1",
           "setmetatable(_G, nil) return 1",
           "setmetatable(string, {}) return 1",
           "table.insert(string, 1) return 1",
           "local ok, e = pcall(function() x = 1 end) return e",
           "return coroutine.wrap(function() x = 1 end)()",
           "return {rawget(_G, 'redis') == redis, rawget(_G, 'nope') == nil, #_G}",
           "return {rawequal(string, getmetatable('').__index), getmetatable(string) == nil, "
           "type(getmetatable(_G)), type(getmetatable(_G).__index)}",
           "local n = 0 table.foreach(string, function() n = n + 1 end) return n",
           "local t = setmetatable({}, {__index = _G}) rawset(t, 'a', 1) table.insert(t, 5) "
           "return {t.a, t[1], type(t.redis)}",
           "return tostring(loadstring(string.dump(function() return 1 end)))",
           "local f, e = loadstring(string.dump(function() return 1 end)) return e",
           "local f, e = loadstring('\\27Lua', 'chunk') return e",
           "local f, e = loadstring('\\27Lua', '=chunk') return e",
           "local f, e = loadstring('\\27Lua', '@chunk') return e",
           "local i = 0 local f, e = load(function() i = i + 1 if i == 1 then return "
           "string.dump(function() end) end end) return e",
           "local i = 0 return load(function() i = i + 1 if i == 1 then return 'return 7' end "
           "end)()",
           "local f, e = load(function() return {} end) return e",
           "local f, e = loadstring('return +') return e",
           "local f, e = loadstring(string.rep('x', 100) .. '\\n+') return e",
           "loadstring('y = 2')() return 1",
           "local ok, e = pcall(redis.call, 'GET') return {tostring(ok), type(e), e}",
           "local ok, e = pcall(error, {err = 'X'}) return {type(e), e}",
           "local ok, e = pcall(error, {x = 1}) return type(e)",
           "return {pcall(function() return 1, 2 end)}",
           "error('x', 0)",
           "error(5)",
           "return bit.tohex(65535, -2147483648)",
           "return {bit.tohex(65535, 2147483647), bit.tohex(-1, -3), bit.tohex(1, 0)}",
           "return cjson.decode(string.rep('[', 2000))",
           "return cjson.decode('{\"a\":' .. string.rep('[', 1000))",
           "return cjson.encode(cjson.decode(string.rep('[', 1000) .. '1' .. string.rep(']', "
           "1000)))",
           "return {cjson.encode_max_depth(), cjson.decode_max_depth(), "
           "cjson.encode_number_precision(), cjson.encode_number_precision(14)}",
           "local a, b, c = cjson.encode_sparse_array() return {tostring(a), b, c}",
           "return {tostring(cjson.encode_invalid_numbers()), "
           "tostring(cjson.decode_invalid_numbers())}",
           "return cjson.encode_number_precision(20)",
           "return {type(cjson.new()), tostring(cjson.new().null == cjson.null), cjson._NAME, "
           "cjson._VERSION}",
           "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
           "return cmsgpack.unpack(string.rep('\\145', 5000))",
           "return {pcall(cmsgpack.unpack, '\\220\\255\\255')}",
           "return struct.unpack('f', 'xxxxxxxxxxxxx', -3)",
           "return struct.pack('i99999999999', 1)",
           "return struct.unpack('c0', 'x')",
           "return {redis.REPL_ALL, redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, "
           "redis.REPL_SLAVE, tostring(redis.breakpoint()), redis.acl_check_cmd('GET', 'x')}",
           "return redis.setresp(4)",
           "return cmsgpack.pack({[-1e308] = 1, [1e308] = 2, [0/0 == 0/0 and 1 or 3] = 3})",
           // A range whose count overflows an int: Lua 5.1 wrote past its stack.
           "return {pcall(unpack, {}, -2147483648, 2147483647)}",
           "return {pcall(unpack, {1}, -2147483648, 4294967296.5)}",
           "return {unpack({1, 2, 3}, 2, 3), unpack({1, 2}, 3, 2), unpack({7}, 2147483647)}",
       }) {
    scripts.push_back(eval(body));
  }
  return rc::gen::elementOf(scripts);
}

// The newer commands, each drawn often, among the writes that make the states they read.
rc::Gen<Argv> NewerCommand() {
  return rc::gen::oneOf(
      LPos(), SetAlgebra(), SetAlgebraSorted(), ZAddIncr(), SetRange(), Copy(), ZRangeByScore(),
      KeysAndScan(), CollectionScan(), RandomDraws(), LexRange(), ZAddOneScore(), ZAddOneScore(),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("LPUSH", "RPUSH"), *Key(),
                    *rc::gen::element<std::string>("1", "7", "x"),
                    *rc::gen::element<std::string>("1", "7")};
      }),
      rc::gen::exec([] {
        return Argv{"SADD", *Key(), *Member(), *Member()};
      }),
      rc::gen::exec([] {  // integers only, so that "ints:" keys stay intsets
        return Argv{"SADD", "ints:" + *Key(), *rc::gen::element<std::string>("1", "-5", "300"),
                    *rc::gen::element<std::string>("2", "-70000", "5000000000")};
      }),
      rc::gen::exec([] {
        return Argv{"ZADD", *Key(), *Score(), *Field()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("SET", "APPEND"), *Key(), *Number()};
      }),
      rc::gen::exec([] {
        return Argv{*rc::gen::element<std::string>("GET", "TTL", "DEL"), *Key()};
      }),
      rc::gen::exec([] {
        return Argv{"PEXPIRE", *Key(), *rc::gen::element<std::string>("1", "1000")};
      }),
      rc::gen::just(Argv{"DBSIZE"}));  // which expired keys a command reclaimed
}

rc::Gen<std::vector<KvOp>> Ops(const rc::Gen<Argv>& command) {
  const rc::Gen<KvOp> op = rc::gen::exec([command] {
    KvOp o;
    o.advance_ms = *rc::gen::weightedElement<int64_t>(
        {{6, 0}, {4, 1}, {2, 2}, {1, 5}, {1, 999}, {1, 1000}, {1, 1001}});
    o.argv = *command;
    return o;
  });
  return rc::gen::resize(40, rc::gen::nonEmpty(rc::gen::container<std::vector<KvOp>>(op)));
}

Argv AtTime(Argv argv, Instant now) {
  for (std::string& a : argv) {
    if (a == kNowMs) a = std::to_string(UnixMillis(now));
    if (a == kNowUs) a = std::to_string(UnixMillis(now) * 1000);
    if (a == kPastS) a = std::to_string(UnixMillis(now) / 1000 - 1);
    if (a == kSoonS) a = std::to_string(UnixMillis(now) / 1000 + 1);
    if (a == kPastMs) a = std::to_string(UnixMillis(now) - 5);
    if (a == kSoonMs) a = std::to_string(UnixMillis(now) + 5);
  }
  return argv;
}

TEST(KvEquivalenceTest, MemoryKvAnswersAsRedisDoes) {
  const Instant start = FromUnixMillis(kStartMs);
  RedisServerOptions options;
  options.virtual_clock = start;
  options.extra_args = {"--enable-debug-command", "local"};
  RATELAB_START_REDIS(server, options);
  RedisKv redis(server->endpoint());
  // Redis's cron deletes expired keys on the machine's time, which DBSIZE would show at random;
  // MemoryKv reclaims an expired key only when it is touched, as Redis does with the cron off.
  const Result<KvReply> cron_off = redis.Execute(Argv{"DEBUG", "SET-ACTIVE-EXPIRE", "0"});
  ASSERT_TRUE(cron_off.ok() && *cron_off == KvReply::Ok()) << cron_off.status();
  const Argv flush = {"FLUSHALL"};
  const Argv script_flush = {"SCRIPT", "FLUSH"};
  const auto equivalent = [&](const std::string& what, const rc::Gen<Argv>& command) {
    return rc::check(what, [&] {
      const std::vector<KvOp> ops = *Ops(command);
      // Start each case empty, on the same clock.
      server->virtual_clock()->Set(start);
      RC_ASSERT(redis.Execute(flush).ok());
      RC_ASSERT(redis.Execute(script_flush).ok());
      ManualClock clock(start);
      MemoryKv memory(clock);
      for (size_t i = 0; i < ops.size(); ++i) {
        clock.Advance(std::chrono::milliseconds(ops[i].advance_ms));
        server->virtual_clock()->Set(clock.Now());
        const Argv argv = AtTime(ops[i].argv, clock.Now());
        const Result<KvReply> want = redis.Execute(argv);
        RC_ASSERT(want.ok());
        const Result<KvReply> got = memory.Execute(argv);
        RC_ASSERT(got.ok());
        if (!(*got == *want)) {
          RC_FAIL("after" + Describe(ops, i) + "\nredis-server: " + ToString(*want) +
                  "\nMemoryKv:     " + ToString(*got));
        }
      }
    });
  };
  EXPECT_TRUE(equivalent("every reply of MemoryKv equals redis-server's", Command()));
  EXPECT_TRUE(
      equivalent("so do its replies to the newer commands (LPOS, SINTER, SUNION, SDIFF, "
                 "ZADD INCR, ZRANGE BYSCORE REV LIMIT, ZRANGE BYLEX, ZRANGEBYLEX, ZREVRANGEBYLEX, "
                 "ZLEXCOUNT, ZREMRANGEBYLEX, SETRANGE, COPY, KEYS, SCAN, SSCAN, HSCAN, ZSCAN, "
                 "SPOP, SRANDMEMBER, HRANDFIELD), drawn often",
                 NewerCommand()));
  EXPECT_TRUE(
      equivalent("so do its scripts that reach past the sandbox, or for a bundled library's edges",
                 SandboxScript()));
}

}  // namespace
}  // namespace ratelab
