#include "impl/store/memory_kv.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "impl/store/lua_scripting.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {

struct MemoryKv::Command {
  std::string_view name;
  int arity;  // Redis's convention: n exactly n arguments (name included); -n at least n
  KvReply (MemoryKv::*run)(Args);
  bool grows = false;  // may add to the data (Redis's "denyoom"): refused past the cap
};

MemoryKv::MemoryKv(const Clock& clock, Durability durability, int64_t script_budget,
                   std::shared_ptr<LuaCache> lua_cache)
    : clock_(clock),
      snapshot_(durability),
      script_budget_(script_budget),
      lua_cache_(std::move(lua_cache)) {}

LuaScripting& MemoryKv::Lua() {
  if (lua_ == nullptr) {
    LuaScripting::Dispatch dispatch = [this](std::span<const std::string> argv) {
      return Dispatch(argv, true);
    };
    if (lua_cache_ != nullptr) lua_ = lua_cache_->Take();
    if (lua_ != nullptr) {
      lua_->Serve(std::move(dispatch), script_budget_, lua_cache_);
    } else {
      lua_ = std::make_unique<LuaScripting>(std::move(dispatch), script_budget_,
                                            LuaScripting::kMemoryCap, lua_cache_);
    }
  }
  return *lua_;
}

MemoryKv::~MemoryKv() {
  if (lua_ != nullptr && lua_cache_ != nullptr) lua_cache_->GiveBack(std::move(lua_));
}

Result<KvReply> MemoryKv::Execute(std::span<const std::string> argv) {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  return Dispatch(argv, false);
}

KvReply MemoryKv::Dispatch(Args argv, bool from_script) {
  static constexpr Command kCommands[] = {
      {"get", 2, &MemoryKv::Get},
      {"mget", -2, &MemoryKv::MGet},
      {"set", -3, &MemoryKv::Set, true},
      {"mset", -3, &MemoryKv::MSet, true},
      {"msetnx", -3, &MemoryKv::MSetNx, true},
      {"setnx", 3, &MemoryKv::SetNx, true},
      {"strlen", 2, &MemoryKv::StrLen},
      {"getrange", 4, &MemoryKv::GetRange},
      {"append", 3, &MemoryKv::Append, true},
      {"setrange", 4, &MemoryKv::SetRange, true},
      {"incr", 2, &MemoryKv::Incr, true},
      {"incrby", 3, &MemoryKv::IncrByCommand, true},
      {"decr", 2, &MemoryKv::Decr, true},
      {"decrby", 3, &MemoryKv::DecrBy, true},
      {"incrbyfloat", 3, &MemoryKv::IncrByFloat, true},
      {"setex", 4, &MemoryKv::SetEx, true},
      {"psetex", 4, &MemoryKv::PSetEx, true},
      {"getset", 3, &MemoryKv::GetSet, true},
      {"getdel", 2, &MemoryKv::GetDel},
      {"getex", -2, &MemoryKv::GetEx},
      {"rename", 3, &MemoryKv::Rename},
      {"renamenx", 3, &MemoryKv::RenameNx},
      {"copy", -3, &MemoryKv::Copy, true},
      {"del", -2, &MemoryKv::Del},
      {"unlink", -2, &MemoryKv::Del},
      {"exists", -2, &MemoryKv::Exists},
      {"type", 2, &MemoryKv::Type},
      {"expire", -3, &MemoryKv::Expire},
      {"pexpire", -3, &MemoryKv::PExpire},
      {"expireat", -3, &MemoryKv::ExpireAt},
      {"pexpireat", -3, &MemoryKv::PExpireAt},
      {"ttl", 2, &MemoryKv::Ttl},
      {"pttl", 2, &MemoryKv::PTtl},
      {"expiretime", 2, &MemoryKv::ExpireTime},
      {"pexpiretime", 2, &MemoryKv::PExpireTime},
      {"persist", 2, &MemoryKv::Persist},
      {"time", 1, &MemoryKv::Time},
      {"ping", -1, &MemoryKv::Ping},
      {"dbsize", 1, &MemoryKv::DbSize},
      {"flushall", -1, &MemoryKv::FlushAll},
      {"wait", 3, &MemoryKv::Wait},
      {"hget", 3, &MemoryKv::HGet},
      {"hset", -4, &MemoryKv::HSet, true},
      {"hsetnx", 4, &MemoryKv::HSetNx, true},
      {"hkeys", 2, &MemoryKv::HKeys},
      {"hvals", 2, &MemoryKv::HVals},
      {"hmget", -3, &MemoryKv::HMGet},
      {"hgetall", 2, &MemoryKv::HGetAll},
      {"hincrby", 4, &MemoryKv::HIncrBy, true},
      {"hincrbyfloat", 4, &MemoryKv::HIncrByFloat, true},
      {"hmset", -4, &MemoryKv::HMSet, true},
      {"hdel", -3, &MemoryKv::HDel},
      {"hexists", 3, &MemoryKv::HExists},
      {"hlen", 2, &MemoryKv::HLen},
      {"hstrlen", 3, &MemoryKv::HStrLen},
      {"lpush", -3, &MemoryKv::LPush, true},
      {"rpush", -3, &MemoryKv::RPush, true},
      {"lpop", -2, &MemoryKv::LPop},
      {"rpop", -2, &MemoryKv::RPop},
      {"llen", 2, &MemoryKv::LLen},
      {"lindex", 3, &MemoryKv::LIndex},
      {"lrange", 4, &MemoryKv::LRange},
      {"ltrim", 4, &MemoryKv::LTrim},
      {"lset", 4, &MemoryKv::LSet, true},
      {"lrem", 4, &MemoryKv::LRem},
      {"linsert", 5, &MemoryKv::LInsert, true},
      {"lmove", 5, &MemoryKv::LMove, true},
      {"rpoplpush", 3, &MemoryKv::RPopLPush, true},
      {"lpos", -3, &MemoryKv::LPos},
      {"zadd", -4, &MemoryKv::ZAdd, true},
      {"zrem", -3, &MemoryKv::ZRem},
      {"zremrangebyscore", 4, &MemoryKv::ZRemRangeByScore},
      {"zcard", 2, &MemoryKv::ZCard},
      {"zcount", 4, &MemoryKv::ZCount},
      {"zscore", 3, &MemoryKv::ZScore},
      {"zrange", -4, &MemoryKv::ZRange},
      {"zrevrange", -4, &MemoryKv::ZRevRange},
      {"zrank", 3, &MemoryKv::ZRank},
      {"zrevrank", 3, &MemoryKv::ZRevRank},
      {"zremrangebyrank", 4, &MemoryKv::ZRemRangeByRank},
      {"zincrby", 4, &MemoryKv::ZIncrBy, true},
      {"zrangebyscore", -4, &MemoryKv::ZRangeByScore},
      {"zrevrangebyscore", -4, &MemoryKv::ZRevRangeByScore},
      {"zrangebylex", -4, &MemoryKv::ZRangeByLex},
      {"zrevrangebylex", -4, &MemoryKv::ZRevRangeByLex},
      {"zlexcount", 4, &MemoryKv::ZLexCount},
      {"zremrangebylex", 4, &MemoryKv::ZRemRangeByLex},
      {"zpopmin", -2, &MemoryKv::ZPopMin},
      {"zpopmax", -2, &MemoryKv::ZPopMax},
      {"sadd", -3, &MemoryKv::SAdd, true},
      {"srem", -3, &MemoryKv::SRem},
      {"scard", 2, &MemoryKv::SCard},
      {"sismember", 3, &MemoryKv::SIsMember},
      {"smismember", -3, &MemoryKv::SMIsMember},
      {"smembers", 2, &MemoryKv::SMembers},
      {"sinter", -2, &MemoryKv::SInter},
      {"sunion", -2, &MemoryKv::SUnion},
      {"sdiff", -2, &MemoryKv::SDiff},
      {"spop", -2, &MemoryKv::SPop},
      {"srandmember", -2, &MemoryKv::SRandMember},
      {"hrandfield", -2, &MemoryKv::HRandField},
      {"keys", 2, &MemoryKv::Keys},
      {"scan", -2, &MemoryKv::Scan},
      {"sscan", -3, &MemoryKv::SScan},
      {"hscan", -3, &MemoryKv::HScan},
      {"zscan", -3, &MemoryKv::ZScan},
      {"eval", -3, &MemoryKv::Eval},
      {"evalsha", -3, &MemoryKv::EvalSha},
      {"script", -2, &MemoryKv::Script},
  };
  if (argv.empty()) return KvReply::Error("ERR empty command");
  // Compared by length and first letter before the whole name: most of the table differs there.
  const std::string& asked = argv[0];
  const char first =
      asked.empty() ? '\0' : absl::ascii_tolower(static_cast<unsigned char>(asked[0]));
  const auto it = std::find_if(std::begin(kCommands), std::end(kCommands), [&](const Command& c) {
    return c.name.size() == asked.size() && c.name[0] == first &&
           absl::EqualsIgnoreCase(absl::string_view(c.name.data(), c.name.size()), asked);
  });
  // (A script is told which command MemoryKv does not know, where Redis says "Unknown Redis
  // command called from script": it may be one Redis has, to run on a real one.)
  if (it == std::end(kCommands)) return kv_errors::UnknownCommand(argv);
  const std::string_view name = it->name;
  const size_t n = argv.size();
  if ((it->arity > 0 && n != static_cast<size_t>(it->arity)) ||
      (it->arity < 0 && n < static_cast<size_t>(-it->arity))) {
    if (from_script) {  // in a script's words, as Redis 7.0's scriptCall says it
      return KvReply::Error("ERR Wrong number of args calling Redis command from script");
    }
    return kv_errors::Arity(std::string(name));
  }
  if (from_script && (name == "eval" || name == "evalsha" || name == "script" || name == "wait")) {
    return KvReply::Error("ERR This Redis command is not allowed from script");
  }
  if (it->grows) {
    // data_bound_ is at least what the data holds: counted again only when a command could take
    // it past the cap, so that the count is paid for by as many bytes written.
    const int64_t growth = Growth(name, argv);
    if (data_bound_ + growth > data_cap_) {
      data_bound_ = DataBytes();
      if (data_bound_ + growth > data_cap_) {
        return KvReply::Error("OOM command not allowed when used memory > 'maxmemory'.");
      }
    }
    data_bound_ += growth;
  }
  return (this->*(it->run))(argv);
}

int64_t MemoryKv::Growth(std::string_view name, Args argv) {
  int64_t bytes = 0;
  for (const std::string& word : argv) bytes += static_cast<int64_t>(word.size()) + kEntryBytes;
  if (name == "setrange") {  // the string grows to the offset
    const std::optional<int64_t> offset = ParseRedisInteger(argv[2]);
    if (offset && *offset >= 0 && *offset <= kMostStringBytes) bytes += *offset;
  } else if (name == "copy") {  // a copy of the source's value (looked at, not touched: an
                                // expired source is reclaimed by the command, or not, as Redis's)
    if (const auto it = data_.find(argv[1]); it != data_.end()) {
      bytes += EntryBytes(argv[1], it->second);
    }
  }
  return bytes;
}

int64_t MemoryKv::EntryBytes(const std::string& key, const Entry& entry) {
  int64_t bytes = kEntryBytes + static_cast<int64_t>(key.size());
  const auto add = [&](size_t n) { bytes += kEntryBytes + static_cast<int64_t>(n); };
  if (const auto* str = std::get_if<std::string>(&entry.value)) {
    bytes += static_cast<int64_t>(str->size());
  } else if (const auto* hash = std::get_if<Hash>(&entry.value)) {
    for (const auto& [field, value] : *hash) add(field.size() + value.size());
  } else if (const auto* zset = std::get_if<ZSet>(&entry.value)) {
    // (each member is held twice: by score, and by name)
    for (const auto& [member, score] : zset->scores) add(2 * member.size() + 2 * sizeof score);
  } else if (const auto* list = std::get_if<List>(&entry.value)) {
    for (const std::string& element : *list) add(element.size());
  } else if (const auto* set = std::get_if<StringSet>(&entry.value)) {
    for (const std::string& member : set->members) add(member.size());
  }
  return bytes;
}

int64_t MemoryKv::DataBytes() const {
  int64_t bytes = 0;
  for (const auto& [key, entry] : data_) bytes += EntryBytes(key, entry);
  return bytes;
}

void MemoryKv::SetDataCap(int64_t bytes) {
  std::lock_guard lock(mu_);
  data_cap_ = bytes;
}

void MemoryKv::Restart() {
  std::lock_guard lock(mu_);
  now_ms_ = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  snapshot_.Restart(data_, now_ms_);
  data_bound_ = DataBytes();
  if (lua_ != nullptr) lua_->Flush();
}

void MemoryKv::DetachReplica() {
  std::lock_guard lock(mu_);
  if (!replica_follows_) return;
  replica_follows_ = false;
  detached_replica_ = data_;
}

void MemoryKv::FailOver() {
  std::lock_guard lock(mu_);
  if (detached_replica_) data_ = *std::move(detached_replica_);
  detached_replica_.reset();
  replica_follows_ = true;  // the old master's place, taken by a new replica
  snapshot_.Reset(data_);
  data_bound_ = DataBytes();
  if (lua_ != nullptr) lua_->Flush();
}

size_t MemoryKv::KeyCount() const {
  std::lock_guard lock(mu_);
  return data_.size();
}

StateSize MemoryKv::Usage() const {
  std::lock_guard lock(mu_);
  const int64_t now_ms = FloorDiv(ToUnixNanos(clock_.Now()), 1'000'000);
  StateSize s;
  for (const auto& [key, entry] : data_) {
    if (entry.expire_ms >= 0 && now_ms > entry.expire_ms) continue;
    ++s.keys;
    s.bytes += static_cast<int64_t>(key.size());
    if (const auto* str = std::get_if<std::string>(&entry.value)) {
      s.bytes += static_cast<int64_t>(str->size());
    } else if (const auto* hash = std::get_if<Hash>(&entry.value)) {
      for (const auto& [field, value] : *hash) {
        s.bytes += static_cast<int64_t>(field.size() + value.size());
      }
    } else if (const auto* zset = std::get_if<ZSet>(&entry.value)) {
      for (const auto& [member, score] : zset->scores) {
        s.bytes += static_cast<int64_t>(member.size() + sizeof score);
      }
    } else if (const auto* list = std::get_if<List>(&entry.value)) {
      for (const std::string& element : *list) s.bytes += static_cast<int64_t>(element.size());
    } else if (const auto* set = std::get_if<StringSet>(&entry.value)) {
      for (const std::string& member : set->members) s.bytes += static_cast<int64_t>(member.size());
    }
  }
  return s;
}

std::vector<std::string> MemoryKv::KeysWithoutExpiry() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [key, entry] : data_) {
    if (entry.expire_ms < 0) out.push_back(key);
  }
  std::sort(out.begin(), out.end());
  return out;
}

MemoryKv::Entry* MemoryKv::Find(const std::string& key) {
  auto it = data_.find(key);
  if (it == data_.end()) return nullptr;
  if (it->second.expire_ms >= 0 && now_ms_ > it->second.expire_ms) {
    if (keep_lapses_) {
      lapses_.push_back({key, it->second.expire_ms, it->second.expiry_set_ms, now_ms_});
    }
    MarkDirty(key);
    data_.erase(it);
    return nullptr;
  }
  return &it->second;
}

template <typename T>
T* MemoryKv::FindAs(const std::string& key, bool* wrong_type) {
  *wrong_type = false;
  Entry* e = Find(key);
  if (e == nullptr) return nullptr;
  T* v = std::get_if<T>(&e->value);
  *wrong_type = v == nullptr;
  return v;
}
template <typename T>
T* MemoryKv::FindToChange(const std::string& key, bool* wrong_type) {
  T* v = FindAs<T>(key, wrong_type);
  if (v != nullptr) MarkDirty(key);  // the state before the change may be saved first
  return v;
}
template MemoryKv::Hash* MemoryKv::FindToChange<MemoryKv::Hash>(const std::string&, bool*);
template MemoryKv::ZSet* MemoryKv::FindToChange<MemoryKv::ZSet>(const std::string&, bool*);
template MemoryKv::List* MemoryKv::FindToChange<MemoryKv::List>(const std::string&, bool*);
template MemoryKv::StringSet* MemoryKv::FindToChange<MemoryKv::StringSet>(const std::string&,
                                                                          bool*);

template std::string* MemoryKv::FindAs<std::string>(const std::string&, bool*);
template MemoryKv::Hash* MemoryKv::FindAs<MemoryKv::Hash>(const std::string&, bool*);
template MemoryKv::ZSet* MemoryKv::FindAs<MemoryKv::ZSet>(const std::string&, bool*);
template MemoryKv::List* MemoryKv::FindAs<MemoryKv::List>(const std::string&, bool*);
template MemoryKv::StringSet* MemoryKv::FindAs<MemoryKv::StringSet>(const std::string&, bool*);

MemoryKv::Entry& MemoryKv::Write(const std::string& key) {
  MarkDirty(key);
  return data_[key];
}

template <typename T>
T& MemoryKv::WriteAs(const std::string& key) {
  Entry& e = Write(key);
  if (!std::holds_alternative<T>(e.value)) e.value = T{};
  return std::get<T>(e.value);
}
template MemoryKv::Hash& MemoryKv::WriteAs<MemoryKv::Hash>(const std::string&);
template MemoryKv::ZSet& MemoryKv::WriteAs<MemoryKv::ZSet>(const std::string&);
template MemoryKv::List& MemoryKv::WriteAs<MemoryKv::List>(const std::string&);
template MemoryKv::StringSet& MemoryKv::WriteAs<MemoryKv::StringSet>(const std::string&);

void MemoryKv::Erase(const std::string& key) {
  MarkDirty(key);
  data_.erase(key);
}

void MemoryKv::MarkDirty(const std::string& key) { snapshot_.WillChange(data_, key, now_ms_); }

// Strings -------------------------------------------------------------------------------------

KvReply MemoryKv::Get(Args a) {
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return v == nullptr ? KvReply::Nil() : KvReply::Bulk(*v);
}

KvReply MemoryKv::MGet(Args a) {
  std::vector<KvReply> out;
  for (size_t i = 1; i < a.size(); ++i) {
    const Entry* e = Find(a[i]);
    const std::string* s = e == nullptr ? nullptr : std::get_if<std::string>(&e->value);
    out.push_back(s == nullptr ? KvReply::Nil() : KvReply::Bulk(*s));  // another type: nil
  }
  return KvReply::Array(std::move(out));
}

KvReply MemoryKv::MSet(Args a) {
  if (a.size() % 2 != 1) return kv_errors::Arity("mset");
  for (size_t i = 1; i + 1 < a.size(); i += 2) {
    Entry& w = Write(a[i]);
    w.value = a[i + 1];
    w.expire_ms = -1;
  }
  return KvReply::Ok();
}

// MSETNX: every pair set, or (when any of the keys exists) none.
KvReply MemoryKv::MSetNx(Args a) {
  if (a.size() % 2 != 1) return kv_errors::Arity("msetnx");
  for (size_t i = 1; i + 1 < a.size(); i += 2) {
    if (Find(a[i]) != nullptr) return KvReply::Integer(0);
  }
  MSet(a);
  return KvReply::Integer(1);
}

KvReply MemoryKv::SetNx(Args a) {
  if (Find(a[1]) != nullptr) return KvReply::Integer(0);
  Entry& w = Write(a[1]);
  w.value = a[2];
  w.expire_ms = -1;
  return KvReply::Integer(1);
}

KvReply MemoryKv::StrLen(Args a) {
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  return KvReply::Integer(v == nullptr ? 0 : static_cast<int64_t>(v->size()));
}

KvReply MemoryKv::Append(Args a) {
  bool wrong = false;
  FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  const bool existed = Find(a[1]) != nullptr;
  Entry& w = Write(a[1]);  // an existing key keeps its TTL
  if (!existed) w.value = std::string();
  std::string& v = std::get<std::string>(w.value);
  v += a[2];
  return KvReply::Integer(static_cast<int64_t>(v.size()));
}

// SETRANGE key offset value: the string padded with zero bytes up to `offset` and overwritten
// from there; the offset is read before the key's type, and an empty value changes nothing (nor
// makes a key).
KvReply MemoryKv::SetRange(Args a) {
  const std::optional<int64_t> offset = ParseRedisInteger(a[2]);
  if (!offset) return kv_errors::NotInteger();
  if (*offset < 0) return KvReply::Error("ERR offset is out of range");
  bool wrong = false;
  const std::string* was = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (a[3].empty()) return KvReply::Integer(was == nullptr ? 0 : static_cast<int64_t>(was->size()));
  // Redis's proto-max-bulk-len: 512 MB.
  if (*offset + static_cast<int64_t>(a[3].size()) > kMostStringBytes) {
    return KvReply::Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
  }
  const bool existed = was != nullptr;
  Entry& w = Write(a[1]);  // an existing key keeps its TTL
  if (!existed) w.value = std::string();
  std::string& v = std::get<std::string>(w.value);
  const auto at = static_cast<size_t>(*offset);
  if (v.size() < at + a[3].size()) v.resize(at + a[3].size(), '\0');
  v.replace(at, a[3].size(), a[3]);
  return KvReply::Integer(static_cast<int64_t>(v.size()));
}

KvReply MemoryKv::Set(Args a) {
  bool nx = false, xx = false, get = false, keep_ttl = false;
  int64_t expire_ms = -1;
  for (size_t i = 3; i < a.size(); ++i) {
    const std::string opt = absl::AsciiStrToUpper(a[i]);
    if (opt == "NX" && !xx) {
      nx = true;
    } else if (opt == "XX" && !nx) {
      xx = true;
    } else if (opt == "GET") {
      get = true;
    } else if (opt == "KEEPTTL" && expire_ms < 0) {
      keep_ttl = true;
    } else if (IsExpiryOption(opt) && !keep_ttl && expire_ms < 0 && i + 1 < a.size()) {
      std::variant<int64_t, KvReply> at = ExpiryOption(opt, a[++i], "set");
      if (auto* error = std::get_if<KvReply>(&at)) return *error;
      expire_ms = std::get<int64_t>(at);
    } else {
      return kv_errors::Syntax();
    }
  }
  Entry* e = Find(a[1]);
  KvReply old = KvReply::Nil();
  if (get && e != nullptr) {
    const std::string* s = std::get_if<std::string>(&e->value);
    if (s == nullptr) return kv_errors::WrongType();
    old = KvReply::Bulk(*s);
  }
  if ((nx && e != nullptr) || (xx && e == nullptr)) return old;
  const int64_t kept = (keep_ttl && e != nullptr) ? e->expire_ms : -1;
  const int64_t kept_set = (keep_ttl && e != nullptr) ? e->expiry_set_ms : -1;
  Entry& w = Write(a[1]);
  w.value = a[2];
  w.expire_ms = expire_ms >= 0 ? expire_ms : kept;
  w.expiry_set_ms = expire_ms >= 0 ? now_ms_ : kept_set;
  return get ? old : KvReply::Ok();
}

KvReply MemoryKv::IncrBy(const std::string& key, int64_t by) {
  bool wrong = false;
  std::string* v = FindAs<std::string>(key, &wrong);
  if (wrong) return kv_errors::WrongType();
  int64_t current = 0;
  if (v != nullptr) {
    const std::optional<int64_t> parsed = ParseRedisInteger(*v);
    if (!parsed) return kv_errors::NotInteger();
    current = *parsed;
  }
  int64_t next = 0;
  if (__builtin_add_overflow(current, by, &next)) return kv_errors::Overflow();
  Entry& w = Write(key);
  w.value = std::to_string(next);  // a new key has no TTL; an existing one keeps its TTL
  return KvReply::Integer(next);
}

KvReply MemoryKv::Incr(Args a) { return IncrBy(a[1], 1); }
KvReply MemoryKv::Decr(Args a) { return IncrBy(a[1], -1); }
KvReply MemoryKv::IncrByCommand(Args a) {
  const std::optional<int64_t> by = ParseRedisInteger(a[2]);
  return by ? IncrBy(a[1], *by) : kv_errors::NotInteger();
}
KvReply MemoryKv::DecrBy(Args a) {
  const std::optional<int64_t> by = ParseRedisInteger(a[2]);
  if (!by) return kv_errors::NotInteger();
  if (*by == std::numeric_limits<int64_t>::min()) {
    return KvReply::Error("ERR decrement would overflow");
  }
  return IncrBy(a[1], -*by);
}

KvReply MemoryKv::SetEx(Args a) { return SetExpiring(a, 1000, "setex"); }
KvReply MemoryKv::PSetEx(Args a) { return SetExpiring(a, 1, "psetex"); }

// SETEX key ttl value: SET key value with a TTL of `ttl` units of `unit_ms`.
KvReply MemoryKv::SetExpiring(Args a, int64_t unit_ms, const char* name) {
  const std::optional<int64_t> ttl = ParseRedisInteger(a[2]);
  if (!ttl) return kv_errors::NotInteger();
  int64_t when = 0;
  if (*ttl <= 0 || __builtin_mul_overflow(*ttl, unit_ms, &when) ||
      __builtin_add_overflow(when, now_ms_, &when)) {
    return kv_errors::InvalidExpire(name);
  }
  Entry& w = Write(a[1]);
  w.value = a[3];
  w.expire_ms = when;
  w.expiry_set_ms = now_ms_;
  return KvReply::Ok();
}

KvReply MemoryKv::GetSet(Args a) {
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  KvReply old = v == nullptr ? KvReply::Nil() : KvReply::Bulk(*v);
  Entry& w = Write(a[1]);
  w.value = a[2];
  w.expire_ms = -1;  // as SET: the TTL goes
  return old;
}

bool MemoryKv::IsExpiryOption(std::string_view option) {
  return option == "EX" || option == "PX" || option == "EXAT" || option == "PXAT";
}

std::variant<int64_t, KvReply> MemoryKv::ExpiryOption(std::string_view option,
                                                      const std::string& value,
                                                      const char* command) const {
  const std::optional<int64_t> v = ParseRedisInteger(value);
  if (!v) return kv_errors::NotInteger();
  const int64_t unit = (option == "EX" || option == "EXAT") ? 1000 : 1;
  if (*v <= 0 || *v > std::numeric_limits<int64_t>::max() / unit) {
    return kv_errors::InvalidExpire(command);
  }
  const bool absolute = option == "EXAT" || option == "PXAT";
  if (!absolute && *v * unit > std::numeric_limits<int64_t>::max() - now_ms_) {
    return kv_errors::InvalidExpire(command);
  }
  return absolute ? *v * unit : now_ms_ + *v * unit;
}

// GETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST]: the value, its expiry set or removed. A
// time already past deletes the key (the value is still answered), as Redis does.
KvReply MemoryKv::GetEx(Args a) {
  std::string option;  // EX, PX, EXAT, PXAT or PERSIST
  std::string value;
  for (size_t i = 2; i < a.size(); ++i) {
    const std::string opt = absl::AsciiStrToUpper(a[i]);
    if (opt == "PERSIST" && option.empty()) {
      option = opt;
    } else if (IsExpiryOption(opt) && option.empty() && i + 1 < a.size()) {
      option = opt;
      value = a[++i];
    } else {
      return kv_errors::Syntax();
    }
  }
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (v == nullptr) return KvReply::Nil();
  std::optional<int64_t> expire_ms;
  if (IsExpiryOption(option)) {
    std::variant<int64_t, KvReply> at = ExpiryOption(option, value, "getex");
    if (auto* error = std::get_if<KvReply>(&at)) return *error;
    expire_ms = std::get<int64_t>(at);
  }
  KvReply out = KvReply::Bulk(*v);
  if (expire_ms && (option == "EXAT" || option == "PXAT") && *expire_ms <= now_ms_) {
    Erase(a[1]);
  } else if (expire_ms) {
    Entry& w = Write(a[1]);
    w.expire_ms = *expire_ms;
    w.expiry_set_ms = now_ms_;
  } else if (option == "PERSIST") {
    Write(a[1]).expire_ms = -1;
  }
  return out;
}

KvReply MemoryKv::GetDel(Args a) {
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  if (v == nullptr) return KvReply::Nil();
  KvReply old = KvReply::Bulk(*v);
  Erase(a[1]);
  return old;
}

// Keys and expiry -----------------------------------------------------------------------------

KvReply MemoryKv::Rename(Args a) {
  Entry* from = Find(a[1]);
  if (from == nullptr) return KvReply::Error("ERR no such key");
  if (a[1] == a[2]) return KvReply::Ok();
  Entry moved = *from;  // with its TTL
  Erase(a[1]);
  Write(a[2]) = std::move(moved);
  return KvReply::Ok();
}

// RENAMENX: as RENAME, but 0 (and nothing moved) when the new name is taken, or is the same.
KvReply MemoryKv::RenameNx(Args a) {
  if (Find(a[1]) == nullptr) return KvReply::Error("ERR no such key");
  if (a[1] == a[2] || Find(a[2]) != nullptr) return KvReply::Integer(0);
  Rename(a);
  return KvReply::Integer(1);
}

// COPY source destination [DB 0] [REPLACE]: 1 when copied (with its TTL), 0 when there is no
// source or the destination is taken without REPLACE. MemoryKv has the one database, 0.
KvReply MemoryKv::Copy(Args a) {
  bool replace = false;
  for (size_t i = 3; i < a.size(); ++i) {
    const std::string option = absl::AsciiStrToUpper(a[i]);
    if (option == "REPLACE") {
      replace = true;
    } else if (option == "DB" && i + 1 < a.size()) {
      const std::optional<int64_t> db = ParseRedisInteger(a[++i]);
      if (!db || *db < INT32_MIN || *db > INT32_MAX) return kv_errors::NotInteger();
      if (*db != 0) return KvReply::Error("ERR DB index is out of range");
    } else {
      return kv_errors::Syntax();
    }
  }
  if (a[1] == a[2]) return KvReply::Error("ERR source and destination objects are the same");
  const Entry* from = Find(a[1]);
  if (from == nullptr) return KvReply::Integer(0);
  if (Find(a[2]) != nullptr && !replace) return KvReply::Integer(0);
  Entry copy = *from;
  Write(a[2]) = std::move(copy);
  return KvReply::Integer(1);
}

KvReply MemoryKv::Del(Args a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (Find(a[i]) != nullptr) {
      Erase(a[i]);
      ++n;
    }
  }
  return KvReply::Integer(n);
}

KvReply MemoryKv::Exists(Args a) {
  int64_t n = 0;
  for (size_t i = 1; i < a.size(); ++i) n += Find(a[i]) != nullptr ? 1 : 0;
  return KvReply::Integer(n);
}

KvReply MemoryKv::Type(Args a) {
  const Entry* e = Find(a[1]);
  if (e == nullptr) return KvReply::Status("none");
  static constexpr std::array<std::string_view, 5> kNames = {"string", "hash", "zset", "list",
                                                             "set"};
  return KvReply::Status(std::string(kNames[e->value.index()]));
}

KvReply MemoryKv::Expire(Args a) { return ExpireIn(a, 1000, false, "expire"); }
KvReply MemoryKv::PExpire(Args a) { return ExpireIn(a, 1, false, "pexpire"); }
KvReply MemoryKv::ExpireAt(Args a) { return ExpireIn(a, 1000, true, "expireat"); }
KvReply MemoryKv::PExpireAt(Args a) { return ExpireIn(a, 1, true, "pexpireat"); }

KvReply MemoryKv::ExpireIn(Args a, int64_t unit_ms, bool absolute, const char* name) {
  std::array<bool, 4> flags{};
  const size_t end = ReadKvOptions<4>(a, 3, {"NX", "XX", "GT", "LT"}, flags);
  if (end < a.size()) return KvReply::Error("ERR Unsupported option " + a[end]);
  const auto [nx, xx, gt, lt] = flags;
  if (nx && (xx || gt || lt)) {
    return KvReply::Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) return KvReply::Error("ERR GT and LT options at the same time are not compatible");
  // Redis reads the options before the time.
  const std::optional<int64_t> ttl = ParseRedisInteger(a[2]);
  if (!ttl) return kv_errors::NotInteger();
  int64_t when = 0;
  if (__builtin_mul_overflow(*ttl, unit_ms, &when) ||
      (!absolute && __builtin_add_overflow(when, now_ms_, &when))) {
    return kv_errors::InvalidExpire(name);
  }
  Entry* e = Find(a[1]);
  if (e == nullptr) return KvReply::Integer(0);
  const bool has = e->expire_ms >= 0;
  if ((nx && has) || (xx && !has) || (gt && (!has || when <= e->expire_ms)) ||
      (lt && has && when >= e->expire_ms)) {
    return KvReply::Integer(0);
  }
  if (when <= now_ms_) {
    Erase(a[1]);
  } else {
    Entry& w = Write(a[1]);
    w.expire_ms = when;
    w.expiry_set_ms = now_ms_;
  }
  return KvReply::Integer(1);
}

KvReply MemoryKv::Ttl(Args a) { return TtlIn(a, false); }
KvReply MemoryKv::PTtl(Args a) { return TtlIn(a, true); }

KvReply MemoryKv::ExpireTime(Args a) { return TtlIn(a, false, true); }
KvReply MemoryKv::PExpireTime(Args a) { return TtlIn(a, true, true); }

KvReply MemoryKv::TtlIn(Args a, bool ms, bool absolute) {
  const Entry* e = Find(a[1]);
  if (e == nullptr) return KvReply::Integer(-2);
  if (e->expire_ms < 0) return KvReply::Integer(-1);
  const int64_t ttl = std::max<int64_t>(0, absolute ? e->expire_ms : e->expire_ms - now_ms_);
  return KvReply::Integer(ms ? ttl : (ttl + 500) / 1000);
}

// GETRANGE key start end: the bytes from start to end, both included (negative: from the end).
KvReply MemoryKv::GetRange(Args a) {
  const std::optional<int64_t> from = ParseRedisInteger(a[2]), to = ParseRedisInteger(a[3]);
  if (!from || !to) return kv_errors::NotInteger();
  bool wrong = false;
  const std::string* v = FindAs<std::string>(a[1], &wrong);
  if (wrong) return kv_errors::WrongType();
  int64_t start = *from, end = *to;
  if (v == nullptr || (start < 0 && end < 0 && start > end)) return KvReply::Bulk("");
  const int64_t size = static_cast<int64_t>(v->size());
  if (start < 0) start = std::max<int64_t>(0, size + start);
  if (end < 0) end = std::max<int64_t>(0, size + end);
  end = std::min(end, size - 1);
  if (start > end || size == 0) return KvReply::Bulk("");
  return KvReply::Bulk(v->substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

KvReply MemoryKv::Persist(Args a) {
  Entry* e = Find(a[1]);
  if (e == nullptr || e->expire_ms < 0) return KvReply::Integer(0);
  Write(a[1]).expire_ms = -1;
  return KvReply::Integer(1);
}

// Server ----------------------------------------------------------------------------------------

KvReply MemoryKv::Time(Args) {
  const int64_t us = FloorDiv(ToUnixNanos(clock_.Now()), 1000);
  return KvReply::Array({KvReply::Bulk(std::to_string(FloorDiv(us, 1'000'000))),
                         KvReply::Bulk(std::to_string(us - FloorDiv(us, 1'000'000) * 1'000'000))});
}

KvReply MemoryKv::Ping(Args a) {
  if (a.size() > 2) return kv_errors::Arity("ping");
  return a.size() == 2 ? KvReply::Bulk(a[1]) : KvReply::Status("PONG");
}

KvReply MemoryKv::DbSize(Args) {
  // Expired keys that nothing touched yet are still counted, as in Redis.
  return KvReply::Integer(static_cast<int64_t>(data_.size()));
}

// WAIT numreplicas timeout: the replicas that have every write so far. The one replica counts while
// it follows; a real server would wait up to the timeout for one that lags, and answer 0 after it.
KvReply MemoryKv::Wait(Args a) {
  const std::optional<int64_t> replicas = ParseRedisInteger(a[1]);
  const std::optional<int64_t> timeout = ParseRedisInteger(a[2]);
  if (!replicas || !timeout) return kv_errors::NotInteger();
  if (*timeout < 0) return KvReply::Error("ERR timeout is negative");
  return KvReply::Integer(replica_follows_ ? 1 : 0);
}

KvReply MemoryKv::FlushAll(Args a) {
  if (a.size() > 2) return kv_errors::Syntax();
  std::vector<std::string> keys;
  for (const auto& [key, entry] : data_) keys.push_back(key);
  for (const std::string& key : keys) Erase(key);
  return KvReply::Ok();
}

}  // namespace ratelab
