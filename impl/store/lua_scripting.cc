#include "impl/store/lua_scripting.h"

#include <openssl/evp.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <lua.hpp>
#include <new>
#include <stdexcept>
#include <vector>

#include "impl/store/lua_budget.h"
#include "impl/store/lua_libraries.h"
#include "impl/store/lua_sandbox.h"

namespace ratelab {
namespace {

constexpr char kSelfKey[] = "ratelab.self";
constexpr char kScriptsKey[] = "ratelab.scripts";

// The registry's table of compiled scripts, by SHA-1 (keyed by kScriptsKey's address, which asks
// Lua to intern no string each run).
void PushScripts(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(kScriptsKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
}
// Makes the table on top of the stack the scripts' table, and pops it.
void SetScripts(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(kScriptsKey));
  lua_insert(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}
constexpr int32_t kRand48Max = 0x7fffffff;

void PushReply(lua_State* L, const KvReply& r) {
  switch (r.type) {
    case KvReply::Type::kNil:
      lua_pushboolean(L, 0);
      return;
    case KvReply::Type::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case KvReply::Type::kBulk:
      lua_pushlstring(L, r.text.data(), r.text.size());
      return;
    case KvReply::Type::kStatus:
    case KvReply::Type::kError:
      lua_newtable(L);
      lua_pushlstring(L, r.text.data(), r.text.size());
      lua_setfield(L, -2, r.type == KvReply::Type::kStatus ? "ok" : "err");
      return;
    case KvReply::Type::kArray:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        PushReply(L, r.elements[i]);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
  }
}

// The string field `name` of the table at `index`, if it has one.
std::optional<std::string> StringField(lua_State* L, int index, const char* name) {
  lua_getfield(L, index, name);
  std::optional<std::string> out;
  if (lua_type(L, -1) == LUA_TSTRING) {
    size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    out.emplace(s, n);
  }
  lua_pop(L, 1);
  return out;
}

// A Lua number as Redis makes it an integer reply, (long long) of the double: truncated toward
// zero, and on x86-64 the smallest integer for NaN and for what is out of range.
int64_t ReplyInteger(double x) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(x);
}

// How far a script's return value is converted: tables nested no deeper, and no more elements in
// all. (Redis itself stops at its Lua stack's limit; a reply past these is an error reply.)
constexpr int kDeepestReply = 1000;
constexpr size_t kMostReplyElements = 1'000'000;

// One conversion of a return value: the elements converted so far, and the limit met, if any.
struct Conversion {
  size_t elements = 0;
  std::optional<std::string> over;
};

KvReply ToReply(lua_State* L, int index, int depth, Conversion& c) {
  if (++c.elements > kMostReplyElements) {
    c.over = "has more than " + std::to_string(kMostReplyElements) + " elements";
    return KvReply::Nil();
  }
  switch (lua_type(L, index)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, index, &n);
      return KvReply::Bulk(std::string(s, n));
    }
    case LUA_TBOOLEAN:
      return lua_toboolean(L, index) ? KvReply::Integer(1) : KvReply::Nil();
    case LUA_TNUMBER:
      return KvReply::Integer(ReplyInteger(lua_tonumber(L, index)));
    case LUA_TTABLE: {
      // Each level holds a value on Lua's stack, which has room only for what is asked for.
      if (depth >= kDeepestReply || lua_checkstack(L, 4) == 0) {
        c.over = "nests tables deeper than " + std::to_string(kDeepestReply);
        return KvReply::Nil();
      }
      const int t = index < 0 ? lua_gettop(L) + index + 1 : index;
      if (std::optional<std::string> err = StringField(L, t, "err")) return KvReply::Error(*err);
      if (std::optional<std::string> ok = StringField(L, t, "ok")) return KvReply::Status(*ok);
      std::vector<KvReply> items;
      for (int i = 1; !c.over; ++i) {
        lua_rawgeti(L, t, i);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        items.push_back(ToReply(L, -1, depth + 1, c));
        lua_pop(L, 1);
      }
      return KvReply::Array(std::move(items));
    }
    default:
      return KvReply::Nil();
  }
}

// The reply the Lua value at `index` converts to, or an error reply when it is nested too deeply
// or is too large.
KvReply ToReply(lua_State* L, int index) {
  Conversion c;
  KvReply reply = ToReply(L, index, 0, c);
  if (c.over) return KvReply::Error("ERR the script's reply " + *c.over);
  return reply;
}

// A Lua number as Redis 7.0 passes it to a command ("%.17g").
std::string FormatNumber(lua_Number n) { return FormatRedisScore(static_cast<double>(n)); }

int ErrorReply(lua_State* L) {
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "err");
  return 1;
}

int StatusReply(lua_State* L) {
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int Sha1HexLua(lua_State* L) {
  size_t n = 0;
  const char* s = luaL_checklstring(L, 1, &n);
  const std::string hex = Sha1Hex(std::string_view(s, n));
  lua_pushlstring(L, hex.data(), hex.size());
  return 1;
}

int ReturnTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int Ignore(lua_State*) { return 0; }

void SetFunction(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

void SetArray(lua_State* L, const char* global, std::span<const std::string> values) {
  lua_createtable(L, static_cast<int>(values.size()), 0);
  for (size_t i = 0; i < values.size(); ++i) {
    lua_pushlstring(L, values[i].data(), values[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  SetSandboxGlobal(L, global);
}

// redis.setresp: RESP2 is what MemoryKv's replies are; RESP3's conversions are a real Redis's.
int SetResp(lua_State* L) {
  const int version = luaL_checkint(L, 1);
  if (version != 2 && version != 3) {
    lua_pushliteral(L, "RESP version must be 2 or 3.");  // (no script line: as Redis says it)
    return lua_error(L);
  }
  if (version == 3) {
    return luaL_error(L,
                      "redis.setresp(3): ratelab's in-process Redis converts replies as RESP2 only "
                      "(run the script on a real Redis: --store redis)");
  }
  return 0;
}

int ReturnFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

void SetNumber(lua_State* L, const char* name, lua_Number n) {
  lua_pushnumber(L, n);
  lua_setfield(L, -2, name);
}

}  // namespace

std::string Sha1Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha1(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

// Outside a protected call (setting KEYS up, say) Lua calls this instead of exit(): the harness
// answers for the exception like any other.
static int LuaPanic(lua_State* L) {
  const char* message = lua_tostring(L, -1);
  throw std::runtime_error(std::string("Lua failed outside a script: ") +
                           (message != nullptr ? message : "unknown error"));
}

LuaCache::LuaCache(const std::atomic<int>* stop) : stop_(stop) {}
LuaCache::~LuaCache() = default;

std::optional<std::string> LuaCache::Find(std::string_view sha) const {
  std::lock_guard lock(mu_);
  const auto it = by_sha_.find(absl::string_view(sha.data(), sha.size()));
  if (it == by_sha_.end()) return std::nullopt;
  return it->second;
}

void LuaCache::Keep(std::string sha, std::string bytecode) {
  std::lock_guard lock(mu_);
  if (bytes_ + bytecode.size() > kMostBytes) return;
  bytes_ += bytecode.size();
  by_sha_.try_emplace(std::move(sha), std::move(bytecode));
}

std::string LuaCache::ShaOf(std::string_view body) {
  {
    std::lock_guard lock(mu_);
    const auto it = sha_of_.find(absl::string_view(body.data(), body.size()));
    if (it != sha_of_.end()) return it->second;
  }
  std::string sha = Sha1Hex(body);
  std::lock_guard lock(mu_);
  if (bytes_ + body.size() + sha.size() <= kMostBytes) {
    bytes_ += body.size() + sha.size();
    sha_of_.try_emplace(std::string(body), sha);
  }
  return sha;
}

std::unique_ptr<LuaScripting> LuaCache::Take() {
  std::lock_guard lock(mu_);
  if (spare_.empty()) return nullptr;
  std::unique_ptr<LuaScripting> state = std::move(spare_.back());
  spare_.pop_back();
  return state;
}

void LuaCache::GiveBack(std::unique_ptr<LuaScripting> state) {
  state->Renew();
  std::lock_guard lock(mu_);
  if (spare_.size() < kMostStates) spare_.push_back(std::move(state));
}

LuaScripting::LuaScripting(Dispatch dispatch, int64_t instruction_budget, size_t memory_cap,
                           std::shared_ptr<LuaCache> cache)
    : dispatch_(std::move(dispatch)),
      instruction_budget_(instruction_budget),
      cache_(std::move(cache)),
      memory_(memory_cap),
      L_(lua_newstate(&LuaArena::Allocate, &memory_)) {
  if (L_ == nullptr) throw std::bad_alloc();
  budget_.stop = cache_ != nullptr ? cache_->stop() : nullptr;
  lua_atpanic(L_, LuaPanic);
  lua_State* L = L_;
  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  RegisterLuaBudget(L, &budget_);
  lua_pushlightuserdata(L, const_cast<char*>(kSelfKey));  // (keyed by address: no string)
  lua_pushlightuserdata(L, this);
  lua_rawset(L, LUA_REGISTRYINDEX);
  lua_newtable(L);
  SetScripts(L);

  lua_getglobal(L, "math");
  SetFunction(L, "random", &LuaScripting::Random);
  SetFunction(L, "randomseed", &LuaScripting::RandomSeed);
  lua_pop(L, 1);

  lua_newtable(L);
  SetFunction(L, "call", &LuaScripting::RedisCall);
  SetFunction(L, "pcall", &LuaScripting::RedisPCall);
  SetFunction(L, "error_reply", ErrorReply);
  SetFunction(L, "status_reply", StatusReply);
  SetFunction(L, "sha1hex", Sha1HexLua);
  SetFunction(L, "replicate_commands", ReturnTrue);
  SetFunction(L, "set_repl", Ignore);
  SetFunction(L, "log", Ignore);
  SetFunction(L, "setresp", SetResp);
  SetFunction(L, "breakpoint", ReturnFalse);  // no debugger attached
  SetFunction(L, "debug", Ignore);
  SetFunction(L, "acl_check_cmd", ReturnTrue);  // the default user may run every command
  const char* levels[] = {"LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING"};
  for (int i = 0; i < 4; ++i) SetNumber(L, levels[i], i);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_ALL", 3);
  // The Redis whose answers MemoryKv gives: 7.0.15, as Debian's redis-server.
  lua_pushliteral(L, "7.0.15");
  lua_setfield(L, -2, "REDIS_VERSION");
  SetNumber(L, "REDIS_VERSION_NUM", 0x07000f);
  lua_setglobal(L, "redis");
  OpenRedisLuaLibraries(L);
  OpenRedisSandbox(L);
  // What was replaced while the state was made (Lua's own tonumber, math.random) is garbage: it
  // goes now, so that the state kept, and so every state renewed from it, holds none, and its
  // collector starts from a finished cycle rather than partway through one.
  lua_gc(L, LUA_GCCOLLECT, 0);
  memory_.Keep();
}

void LuaScripting::Renew() {
  memory_.Restore();
  dispatch_ = nullptr;
  cache_ = nullptr;  // a state the cache keeps does not keep the cache
}

void LuaScripting::Serve(Dispatch dispatch, int64_t instruction_budget,
                         std::shared_ptr<LuaCache> cache) {
  dispatch_ = std::move(dispatch);
  instruction_budget_ = instruction_budget;
  cache_ = std::move(cache);
  budget_.stop = cache_ != nullptr ? cache_->stop() : nullptr;
}

LuaScripting::~LuaScripting() { lua_close(L_); }

LuaScripting& LuaScripting::Self(lua_State* L) {
  lua_pushlightuserdata(L, const_cast<char*>(kSelfKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* self = static_cast<LuaScripting*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return *self;
}

KvReply LuaScripting::Load(std::string_view body) {
  const std::string sha = cache_ != nullptr ? cache_->ShaOf(body) : Sha1Hex(body);
  if (Exists(sha)) return KvReply::Bulk(sha);
  if (!body.empty() && body[0] == LUA_SIGNATURE[0]) {
    // Lua 5.1 would load it as bytecode, which a crafted script can use to corrupt memory;
    // Redis's Lua only parses source, which stops at that first byte.
    return KvReply::Error(
        "ERR Error compiling script (new function): user_script:1: unexpected symbol near "
        "'char(27)'");
  }
  const std::optional<std::string> compiled = cache_ != nullptr ? cache_->Find(sha) : std::nullopt;
  const std::string_view chunk = compiled ? std::string_view(*compiled) : body;
  if (luaL_loadbuffer(L_, chunk.data(), chunk.size(), "@user_script") != 0) {
    std::string message = lua_tostring(L_, -1);
    lua_pop(L_, 1);
    return KvReply::Error("ERR Error compiling script (new function): " + message);
  }
  SetSandboxGlobals(L_);
  if (cache_ != nullptr && !compiled) {
    std::string bytecode;
    const auto append = [](lua_State*, const void* p, size_t size, void* to) {
      static_cast<std::string*>(to)->append(static_cast<const char*>(p), size);
      return 0;
    };
    if (lua_dump(L_, append, &bytecode) == 0) cache_->Keep(sha, std::move(bytecode));
  }
  PushScripts(L_);
  lua_insert(L_, -2);                 // scripts, function
  lua_setfield(L_, -2, sha.c_str());  // scripts[sha] = function
  lua_pop(L_, 1);
  return KvReply::Bulk(sha);
}

bool LuaScripting::Exists(std::string_view sha) const {
  PushScripts(L_);
  lua_pushlstring(L_, sha.data(), sha.size());
  lua_rawget(L_, -2);
  const bool found = lua_isfunction(L_, -1);
  lua_pop(L_, 2);
  return found;
}

void LuaScripting::Flush() {
  lua_newtable(L_);
  SetScripts(L_);
}

KvReply LuaScripting::Run(std::string_view sha, std::span<const std::string> keys,
                          std::span<const std::string> args) {
  lua_State* L = L_;
  PushScripts(L);
  lua_pushlstring(L, sha.data(), sha.size());
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (!lua_isfunction(L, -1)) {
    lua_pop(L, 1);
    return KvReply::Error("NOSCRIPT No matching script. Please use EVAL.");
  }
  SetArray(L, "KEYS", keys);
  SetArray(L, "ARGV", args);
  rand48_ = 0x330E;  // redisSrand48(0), before every script
  StartLuaBudget(L, instruction_budget_);
  lua_pushcfunction(L, &LuaScripting::NoteErrorLine);
  lua_insert(L, -2);  // the handler goes below the script
  error_line_ = -1;
  error_source_.clear();
  memory_.enforce = true;
  const int status = lua_pcall(L, 0, 1, -2);
  memory_.enforce = false;
  StopLuaBudget(L);
  KvReply reply;
  // Redis 7.0 says where a raised error came from: "... script: <sha>, on @user_script:3."
  const auto where = [&] {
    return " script: " + std::string(sha) +
           (error_line_ >= 0 ? ", on " + error_source_ + ":" + std::to_string(error_line_) + "."
                             : "");
  };
  if (status == 0) {
    reply = ToReply(L, -1);
  } else if (lua_istable(L, -1)) {  // an error reply raised by redis.call or error({err=...})
    const std::optional<std::string> err = StringField(L, lua_gettop(L), "err");
    reply = KvReply::Error(err.value_or("ERR unknown error") + where());
  } else {
    const char* message = lua_tostring(L, -1);
    reply = KvReply::Error(std::string("ERR ") + (message ? message : "unknown error") + where());
  }
  lua_pop(L, 2);  // the result and the handler
  // What the script left behind (tables it kept in globals aside) goes before the next one runs,
  // so that each starts with its room.
  if (memory_.used() > memory_.cap() / 2) lua_gc(L, LUA_GCCOLLECT, 0);
  return reply;
}

int LuaScripting::NoteErrorLine(lua_State* L) {
  // As Redis's __redis__err__handler: the function that raised it, or its caller when that
  // was a C function (redis.call, error).
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) == 0 || lua_getinfo(L, "Sl", &ar) == 0) return 1;
  if (std::string_view(ar.what) == "C" &&
      (lua_getstack(L, 2, &ar) == 0 || lua_getinfo(L, "Sl", &ar) == 0)) {
    return 1;
  }
  LuaScripting& self = Self(L);
  self.error_line_ = ar.currentline;
  self.error_source_ = ar.source != nullptr ? ar.source : "";
  return 1;
}

int LuaScripting::RedisCall(lua_State* L) { return Self(L).CallCommand(L, true); }
int LuaScripting::RedisPCall(lua_State* L) { return Self(L).CallCommand(L, false); }

int LuaScripting::CallCommand(lua_State* L, bool raise) {
  const int n = lua_gettop(L);
  // The words go in call_argv_, whose strings keep their room from call to call.
  std::vector<std::string>& argv = call_argv_;
  argv.resize(static_cast<size_t>(n));
  KvReply reply;
  for (int i = 1; i <= n; ++i) {
    std::string& word = argv[static_cast<size_t>(i - 1)];
    if (lua_type(L, i) == LUA_TNUMBER) {
      word = FormatNumber(lua_tonumber(L, i));
    } else if (lua_type(L, i) == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      word.assign(s, len);
    } else {
      reply = KvReply::Error("ERR Lua redis() command arguments must be strings or integers");
      break;
    }
  }
  if (n == 0) {
    reply = KvReply::Error("ERR Please specify at least one argument for this redis lib call");
  }
  if (!reply.is_error()) reply = dispatch_(argv);
  PushReply(L, reply);
  // The C++ build of Lua raises errors as exceptions, so the frames above unwind cleanly.
  if (raise && reply.is_error()) return lua_error(L);
  return 1;
}

int32_t LuaScripting::NextRandom() {
  rand48_ = (0x5DEECE66DULL * rand48_ + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(rand48_ >> 17);
}

int LuaScripting::Random(lua_State* L) {
  const lua_Number r = static_cast<lua_Number>(Self(L).NextRandom() % kRand48Max) /
                       static_cast<lua_Number>(kRand48Max);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      return 1;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      return 1;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      // u - l + 1 in 32 bits, wrapping as Redis's int arithmetic does on x86-64 (found by
      // fuzz/lua_script.cc: math.random(-2^31, 0) overflowed).
      const auto span =
          static_cast<int32_t>(static_cast<uint32_t>(u) - static_cast<uint32_t>(l) + 1u);
      lua_pushnumber(L, std::floor(r * span) + l);
      return 1;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
}

int LuaScripting::RandomSeed(lua_State* L) {
  const int32_t seed = luaL_checkint(L, 1);
  Self(L).rand48_ = (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E;
  return 0;
}

}  // namespace ratelab
