// MemoryKv: an in-process simulation of a Redis server, for what limiters and their scripts use:
// the common non-blocking commands on strings, keys, hashes, lists, sets and sorted sets, TIME,
// PING, DBSIZE, FLUSHALL, WAIT, and scripting (EVAL, EVALSHA, SCRIPT LOAD/EXISTS/FLUSH) on
// Debian's Lua 5.1 (see lua_scripting.h). docs/design.md has the table of what is there and what
// is not; each command is drawn against a real redis-server by
// property-tests/kv_equivalence_test.cc.
//
// Time is the injected Clock's, at Redis's millisecond resolution: TIME, TTLs and expiry follow
// the simulator's virtual clock. A key with expiry E (unix ms) exists while now_ms <= E, as in
// Redis. Replies and error texts follow Redis 7.0; small hashes keep insertion order as
// Redis's listpack encoding does.
//
// Restart() is a server restart under the configured Durability; the script cache never
// survives one (EVALSHA answers NOSCRIPT afterwards, as on a real Redis).
//
// Thread-safe: each Execute holds a lock, so commands (and scripts) are atomic across threads.
#ifndef RATELAB_IMPL_STORE_MEMORY_KV_H_
#define RATELAB_IMPL_STORE_MEMORY_KV_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "impl/core/clock.h"
#include "impl/core/state_size.h"
#include "impl/store/durability.h"
#include "impl/store/durable_snapshot.h"
#include "impl/store/kv.h"

namespace ratelab {

class LuaScripting;
class LuaCache;

// A key found expired when a command next touched it: its time to live had run out at
// `expire_ms` (it lived through that millisecond), set at `set_ms`; found gone at `found_ms`
// (unix ms). What a finding that needs a late request says of the key it found gone.
struct KeyLapse {
  std::string key;
  int64_t expire_ms = 0;
  int64_t set_ms = 0;
  int64_t found_ms = 0;
  bool operator==(const KeyLapse&) const = default;
};

class MemoryKv final : public Kv {
 public:
  // The instructions a script may run before it ends in an error reply: about a second's worth.
  static constexpr int64_t kScriptBudget = 100'000'000;
  // What MemoryKv may hold, as a Redis run with maxmemory 512mb and noeviction: counted as the
  // bytes of keys, values, members and fields (a sorted set's members twice), each with
  // kEntryBytes of bookkeeping. A command that could take it past (one that adds data, by the
  // most it could add: SETRANGE its offset, COPY its source) is refused with Redis's OOM error;
  // reads, deletes and expiries still run.
  static constexpr int64_t kDataCap = int64_t{512} << 20;
  static constexpr int64_t kEntryBytes = 32;

  // `script_budget`: the instructions a script may run (an endless loop ends in an error reply);
  // `lua_cache`: compiled scripts and spare Lua states shared with other stores (LuaCache).
  explicit MemoryKv(const Clock& clock, Durability durability = Durability::kAlways,
                    int64_t script_budget = kScriptBudget,
                    std::shared_ptr<LuaCache> lua_cache = nullptr);
  ~MemoryKv() override;
  MemoryKv(const MemoryKv&) = delete;
  MemoryKv& operator=(const MemoryKv&) = delete;

  Result<KvReply> Execute(std::span<const std::string> argv) override;

  // The server restarts: what Durability did not make durable is lost; scripts are forgotten.
  void Restart();

  // The server's one replica, for a failover (as Sentinel runs one). It follows from the start:
  // it holds what the master holds, and WAIT counts it. DetachReplica stops it following (the
  // replica lags: it keeps the state it had then, and no write after reaches it). FailOver loses
  // the master and promotes the replica: the store holds what the replica held (all of it, if it
  // still followed), its scripts are forgotten (a replica's script cache is its own), and a new
  // replica follows it (the old master's host back as its replica).
  void DetachReplica();
  void FailOver();
  Durability durability() const { return snapshot_.durability(); }
  // Live keys (expired ones not yet reclaimed are counted until touched).
  size_t KeyCount() const;
  // Keys live now on the clock, and their payload: key, value, and hash fields and values, or
  // sorted-set members with 8 bytes per score.
  StateSize Usage() const;
  // Sets the data cap (kDataCap unless told).
  void SetDataCap(int64_t bytes);
  // Live keys with no expiry, sorted: state nothing will ever free.
  std::vector<std::string> KeysWithoutExpiry() const;
  // From now on, keeps each key found expired (a search's short run: the log grows with them).
  void KeepLapses() { keep_lapses_ = true; }
  // The keys found expired since KeepLapses, in the order they were found.
  const std::vector<KeyLapse>& lapses() const { return lapses_; }

 private:
  using Args = std::span<const std::string>;
  using Hash = std::vector<std::pair<std::string, std::string>>;  // insertion order
  struct ZSet {
    std::set<std::pair<double, std::string>> by_score;
    absl::flat_hash_map<std::string, double> scores;
    // Redis keeps a small sorted set (up to 128 members of up to 64 bytes) in a listpack, which
    // stores a score of -0 as 0; past either limit it becomes a skiplist for good.
    bool listpack = true;
    // Leaves the listpack when `member` is too long for it, or is new and one too many.
    void Fit(const std::string& member);
    // `score` as the set stores it.
    double Stored(double score) const { return listpack && score == 0 ? 0.0 : score; }
    // Gives `member` (new or not) the score `stored`.
    void Set(const std::string& member, double stored);
  };
  using List = std::deque<std::string>;
  struct StringSet {
    std::set<std::string> members;
    bool intset = true;  // as Redis keeps it: integers only, and few (memory_kv_sets.cc)
  };
  struct Entry {
    std::variant<std::string, Hash, ZSet, List, StringSet> value;
    int64_t expire_ms = -1;      // unix ms; -1: none
    int64_t expiry_set_ms = -1;  // unix ms the expiry was set at (KeyLapse)
  };
  using Map = absl::flat_hash_map<std::string, Entry>;
  struct Command;

  // Runs one command; `from_script` forbids the scripting commands.
  KvReply Dispatch(Args argv, bool from_script);
  // The most command `argv` (called `name`, lower case) can add to the data.
  int64_t Growth(std::string_view name, Args argv);
  // What `key`'s entry holds, as the cap counts it.
  static int64_t EntryBytes(const std::string& key, const Entry& entry);
  // What the data holds, as the cap counts it (every entry, expired ones not yet reclaimed too).
  int64_t DataBytes() const;
  static constexpr int64_t kMostStringBytes = int64_t{512} << 20;  // proto-max-bulk-len
  // The live entry at `key` (expired entries are removed first), or nullptr.
  Entry* Find(const std::string& key);
  // The live entry at `key` holding T; *wrong_type when it holds another type.
  template <typename T>
  T* FindAs(const std::string& key, bool* wrong_type);
  // FindAs for changing the value in place: a found value is marked changed first (MarkDirty).
  template <typename T>
  T* FindToChange(const std::string& key, bool* wrong_type);
  // For writes: marks `key` changed (for everysec durability) and returns its slot. Every
  // change to an entry must come after its MarkDirty, which may first save the key's state as of
  // the last finished second.
  Entry& Write(const std::string& key);
  // Write, for a value of type T: the key's, made an empty T when it holds none (the caller has
  // refused another type already).
  template <typename T>
  T& WriteAs(const std::string& key);
  void Erase(const std::string& key);
  void MarkDirty(const std::string& key);

  // Strings and keys (memory_kv.cc).
  KvReply Get(Args a);
  KvReply MGet(Args a);
  KvReply Set(Args a);
  KvReply MSet(Args a);
  KvReply MSetNx(Args a);
  KvReply SetNx(Args a);
  KvReply StrLen(Args a);
  KvReply Append(Args a);
  KvReply SetRange(Args a);
  KvReply IncrBy(const std::string& key, int64_t by);
  KvReply Incr(Args a);
  KvReply IncrByCommand(Args a);
  KvReply Decr(Args a);
  KvReply DecrBy(Args a);
  KvReply SetEx(Args a);
  KvReply PSetEx(Args a);
  KvReply SetExpiring(Args a, int64_t unit_ms, const char* name);
  KvReply GetSet(Args a);
  KvReply GetDel(Args a);
  KvReply GetEx(Args a);
  // SET's and GETEX's options that give an expiry, and the unix ms one means (or its error).
  static bool IsExpiryOption(std::string_view option);
  std::variant<int64_t, KvReply> ExpiryOption(std::string_view option, const std::string& value,
                                              const char* command) const;
  KvReply Rename(Args a);
  KvReply Copy(Args a);
  KvReply RenameNx(Args a);
  KvReply Del(Args a);
  KvReply Exists(Args a);
  KvReply Type(Args a);
  KvReply Expire(Args a);
  KvReply PExpire(Args a);
  KvReply ExpireAt(Args a);
  KvReply PExpireAt(Args a);
  // EXPIRE and its kin: a time of a[2] units of `unit_ms`, from now or (`absolute`) the epoch.
  KvReply ExpireIn(Args a, int64_t unit_ms, bool absolute, const char* name);
  KvReply Ttl(Args a);
  KvReply PTtl(Args a);
  KvReply TtlIn(Args a, bool ms, bool absolute = false);
  KvReply ExpireTime(Args a);
  KvReply PExpireTime(Args a);
  KvReply GetRange(Args a);
  KvReply Persist(Args a);
  KvReply Time(Args a);
  KvReply Ping(Args a);
  KvReply DbSize(Args a);
  KvReply FlushAll(Args a);
  KvReply Wait(Args a);
  // Hashes and sorted sets (memory_kv_collections.cc).
  KvReply HGet(Args a);
  KvReply HSet(Args a);
  KvReply HSetNx(Args a);
  KvReply HKeys(Args a);
  KvReply HVals(Args a);
  KvReply HalfOfEachPair(Args a, bool values);  // HKEYS, HVALS
  KvReply HMGet(Args a);
  KvReply HGetAll(Args a);
  KvReply HIncrBy(Args a);
  KvReply HMSet(Args a);
  KvReply HDel(Args a);
  KvReply HExists(Args a);
  KvReply HLen(Args a);
  KvReply HStrLen(Args a);
  KvReply ZAdd(Args a);
  KvReply ZRem(Args a);
  KvReply ZRemRangeByScore(Args a);
  KvReply ZCard(Args a);
  KvReply ZCount(Args a);
  KvReply ZScore(Args a);
  KvReply ZRange(Args a);
  KvReply ZRevRange(Args a);
  // ZRANGE and its older forms: what the range is of (rank, score or member) and `reverse` as
  // the command fixes them (unset: its options say, as ZRANGE's BYSCORE, BYLEX and REV do).
  enum class RangeBy { kRank, kScore, kLex };
  KvReply RangeOf(Args a, std::optional<RangeBy> by, std::optional<bool> reverse);
  KvReply LexRangeOf(Args a, bool backwards, int64_t offset, int64_t limit);
  KvReply ZRangeByLex(Args a);
  KvReply ZRevRangeByLex(Args a);
  KvReply ZLexCount(Args a);
  KvReply ZRemRangeByLex(Args a);
  KvReply ZRank(Args a);
  KvReply ZRevRank(Args a);
  KvReply Rank(Args a, bool reverse);  // ZRANK, ZREVRANK
  KvReply ZRemRangeByRank(Args a);
  KvReply ZIncrBy(Args a);
  KvReply ZRangeByScore(Args a);
  KvReply ZRevRangeByScore(Args a);
  KvReply ZPop(Args a, bool max);  // ZPOPMIN, ZPOPMAX
  KvReply ZPopMin(Args a);
  KvReply ZPopMax(Args a);
  // Floats (memory_kv_floats.cc).
  KvReply IncrByFloat(Args a);
  KvReply HIncrByFloat(Args a);
  // Lists (memory_kv_lists.cc).
  KvReply Push(Args a, bool head);
  KvReply LPush(Args a);
  KvReply RPush(Args a);
  KvReply Pop(Args a, bool head);
  KvReply LPop(Args a);
  KvReply RPop(Args a);
  KvReply LLen(Args a);
  KvReply LIndex(Args a);
  KvReply LRange(Args a);
  KvReply LTrim(Args a);
  KvReply LSet(Args a);
  KvReply LRem(Args a);
  KvReply LInsert(Args a);
  KvReply LMove(Args a);
  KvReply RPopLPush(Args a);
  KvReply LPos(Args a);
  // Takes the source's head or tail and puts it at the destination's (LMOVE, RPOPLPUSH).
  KvReply Move(const std::string& source, const std::string& destination, bool from_head,
               bool to_head);
  // Sets (memory_kv_sets.cc).
  KvReply SAdd(Args a);
  KvReply SRem(Args a);
  KvReply SCard(Args a);
  KvReply SIsMember(Args a);
  KvReply SMIsMember(Args a);
  KvReply SMembers(Args a);
  KvReply Keys(Args a);
  KvReply Scan(Args a);
  KvReply SScan(Args a);
  KvReply HScan(Args a);
  KvReply ZScan(Args a);
  // SSCAN, HSCAN and ZSCAN on a collection of type T (memory_kv_scan.cc).
  template <typename T, typename Each>
  KvReply ScanCollection(Args a, Each each);
  KvReply SInter(Args a);
  KvReply SUnion(Args a);
  KvReply SDiff(Args a);
  KvReply SPop(Args a);
  KvReply SRandMember(Args a);
  KvReply HRandField(Args a);
  // `count` distinct indexes below `size` (count < size), or with repetition (`repeat`), drawn
  // from random_ (seeded 0 at the first) in order.
  std::vector<size_t> Draw(size_t size, size_t count, bool repeat);
  // SINTER, SUNION, SDIFF: every key's set (null for a missing key), or WRONGTYPE.
  std::variant<std::vector<const StringSet*>, KvReply> SetsOf(Args a);
  // Scripting (memory_kv_scripting.cc).
  KvReply Eval(Args a);
  KvReply EvalSha(Args a);
  KvReply Script(Args a);
  KvReply RunScript(Args a, bool by_sha);

  const Clock& clock_;
  mutable std::mutex mu_;
  int64_t now_ms_ = 0;  // the command's (or script's) time, fixed while it runs
  Map data_;
  int64_t data_cap_ = kDataCap;
  int64_t data_bound_ = 0;  // at least DataBytes(): what it was, and what was added since
  // What SPOP, SRANDMEMBER and HRANDFIELD draw from: seeded alike in every MemoryKv, so the same
  // commands give the same replies; seeded at the first draw, since most stores never draw (a
  // check makes a store a seed).
  std::optional<std::mt19937_64> random_;
  DurableSnapshot<Map> snapshot_;  // what a restart keeps
  // A replica: following (the master's state) when `replica_follows_`, else detached with the
  // state it had then; none when neither.
  bool replica_follows_ = true;
  bool keep_lapses_ = false;
  std::vector<KeyLapse> lapses_;
  std::optional<Map> detached_replica_;
  // The Lua state, made when the first script needs it (a run of an in-process limiter or of a
  // protocol without scripts never does): Lua().
  LuaScripting& Lua();
  int64_t script_budget_;
  std::shared_ptr<LuaCache> lua_cache_;
  std::unique_ptr<LuaScripting> lua_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_MEMORY_KV_H_
