// The scripting engine of MemoryKv: Redis's EVAL on Debian's Lua 5.1 (the C++ build of the
// library, so a Lua error unwinds C++ frames properly).
//
// What a script sees is what Redis 7.0 gives it, in Redis's sandbox (lua_sandbox.h: Redis's
// globals only, read-only, no bytecode): KEYS and ARGV; redis.call and redis.pcall (replies
// converted Redis-to-Lua: integer -> number, bulk -> string, nil -> false, array -> table,
// status -> {ok=...}, error -> {err=...}); redis.error_reply, redis.status_reply,
// redis.sha1hex, redis.log (ignored), redis.replicate_commands (returns true), redis.setresp (2
// only), redis.breakpoint, redis.debug, redis.acl_check_cmd and the version and REPL_ constants;
// the base, table, string and math libraries, with math.random reseeded to 0 before every
// script, as Redis 6 did (Redis 7 seeds it once, at its start), so that every script is
// deterministic: the same seed of a check gives the same draws; and Redis's cjson, cmsgpack, struct
// and bit (lua_libraries.h). Return values are converted Lua-to-Redis: number -> integer
// (truncated; NaN and what is out of range give the smallest integer, as Redis's cast does on
// x86-64), string -> bulk, true -> 1, false and nil -> nil, {err=...} -> error, {ok=...} -> status,
// other tables -> arrays up to their first nil.
//
// A script runs under a budget of steps (lua_budget.h: instructions, and what loops in C, such
// as pattern matching; no pcall catches its end) and a memory cap (what the Lua state may hold
// while the script runs, counted by its allocator); one that exceeds either (an endless loop,
// string.rep("x", 1e10)) ends in an error reply instead of hanging or exhausting the harness.
// A return value nested deeper than 1000 tables, or of more than 1,000,000 elements, is an
// error reply too.
//
// Not thread-safe: MemoryKv serializes calls.
#ifndef RATELAB_IMPL_STORE_LUA_SCRIPTING_H_
#define RATELAB_IMPL_STORE_LUA_SCRIPTING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "impl/store/kv_reply.h"
#include "impl/store/lua_arena.h"
#include "impl/store/lua_budget.h"

struct lua_State;
struct lua_Debug;

namespace ratelab {

class LuaCache;

class LuaScripting {
 public:
  // Runs one command for redis.call / redis.pcall.
  using Dispatch = absl::AnyInvocable<KvReply(std::span<const std::string>)>;

  // What a Lua state may hold while a script runs, unless told otherwise.
  static constexpr size_t kMemoryCap = size_t{256} << 20;

  // `instruction_budget`: what a script may run before it is ended with an error reply;
  // `memory_cap`: the bytes the Lua state may hold while a script runs.
  // `cache`: where compiled scripts are found and kept (none: each is compiled here).
  LuaScripting(Dispatch dispatch, int64_t instruction_budget, size_t memory_cap = kMemoryCap,
               std::shared_ptr<LuaCache> cache = nullptr);
  ~LuaScripting();
  LuaScripting(const LuaScripting&) = delete;
  LuaScripting& operator=(const LuaScripting&) = delete;

  // SCRIPT LOAD: compiles `body` and caches it under its SHA-1. Replies with the SHA-1 (bulk) or
  // the compile error.
  KvReply Load(std::string_view body);
  bool Exists(std::string_view sha) const;
  // Runs the cached script `sha` (NOSCRIPT when it is not cached).
  KvReply Run(std::string_view sha, std::span<const std::string> keys,
              std::span<const std::string> args);
  // SCRIPT FLUSH, and what a server restart does.
  void Flush();

  // Makes the state what it was when it was made: every script and global gone, the libraries
  // as new, and its memory byte for byte what it was (LuaArena::Restore); it calls no one until
  // Serve. What LuaCache does to a state given back. Exact because a Lua state points only into
  // the memory its allocator gave it, at C functions, and at this object (the registry's Self),
  // none of which moves, and the libraries here keep nothing outside it.
  void Renew();
  // Has the state run commands through `dispatch` from now on, under `instruction_budget`, with
  // `cache` where compiled scripts are found and kept.
  void Serve(Dispatch dispatch, int64_t instruction_budget, std::shared_ptr<LuaCache> cache);

 private:
  static int RedisCall(lua_State* L);
  static int RedisPCall(lua_State* L);
  static int Random(lua_State* L);
  static int RandomSeed(lua_State* L);
  // The error handler of every script: notes the chunk and line the error was raised on (as
  // Redis 7.0's handler does), leaving the error as it is.
  static int NoteErrorLine(lua_State* L);
  static LuaScripting& Self(lua_State* L);
  int CallCommand(lua_State* L, bool raise);
  // Redis's rand48, so math.random gives the numbers it gives on Redis.
  int32_t NextRandom();

  Dispatch dispatch_;
  int64_t instruction_budget_;
  std::shared_ptr<LuaCache> cache_;
  // What the Lua state holds, counted by its allocator, which refuses to pass the cap while a
  // script runs (`enforce`): Lua then raises "not enough memory" in the script.
  LuaArena memory_;           // before L_, which uses it
  LuaBudget budget_;          // the running script's (lua_budget.h)
  int error_line_ = -1;       // the line of the script's last error, -1: unknown
  std::string error_source_;  // the chunk it was raised in ("@user_script")
  uint64_t rand48_ = 0;
  // The words of the redis.call being made (a command never calls another).
  std::vector<std::string> call_argv_;
  lua_State* L_;
};

// What the Lua states of many stores share: each seed of a check is a new store, so a new state
// that compiles the same few scripts. Scripts compiled once are kept as Lua bytecode, and loading
// bytecode skips the parser; only what a LuaScripting compiled itself goes in (a script sent as
// bytecode is refused, as Redis refuses it). A store's state, given back when the store goes, is
// made new (LuaScripting::Renew, a copy of its memory back in place: a fraction of the cost of
// making one) and kept for the next store. Safe to share between threads.
class LuaCache {
 public:
  // `stop`: once set (none: never), the scripts of every state of the cache end at once (a
  // user's Ctrl-C, LuaBudget::stop).
  explicit LuaCache(const std::atomic<int>* stop = nullptr);
  ~LuaCache();
  LuaCache(const LuaCache&) = delete;
  LuaCache& operator=(const LuaCache&) = delete;

  std::optional<std::string> Find(std::string_view sha) const;
  // Keeps `bytecode` under `sha` unless the chunks kept already hold kMostBytes.
  void Keep(std::string sha, std::string bytecode);
  // Sha1Hex(body), worked out once for every state of the cache while what it keeps is under
  // kMostBytes: EVAL names its script by it at each new store's first call.
  std::string ShaOf(std::string_view body);

  // A state given back, as new and calling no one (LuaScripting::Serve it), or none. The states
  // are MemoryKv's, each capped at LuaScripting::kMemoryCap.
  std::unique_ptr<LuaScripting> Take();
  const std::atomic<int>* stop() const { return stop_; }
  // Makes `state` new (LuaScripting::Renew) and keeps it for Take, unless kMostStates are kept.
  void GiveBack(std::unique_ptr<LuaScripting> state);

 private:
  static constexpr size_t kMostBytes = 16 << 20;
  static constexpr size_t kMostStates = 16;
  const std::atomic<int>* const stop_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::string> by_sha_;  // a script's bytecode by its SHA-1
  absl::flat_hash_map<std::string, std::string> sha_of_;  // a script's SHA-1 by its body
  size_t bytes_ = 0;
  std::vector<std::unique_ptr<LuaScripting>> spare_;
};

// The lowercase hex SHA-1 of `text`, as Redis names scripts.
std::string Sha1Hex(std::string_view text);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_LUA_SCRIPTING_H_
