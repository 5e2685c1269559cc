// The catalogue of protocols: what `ratelab list protocols` shows and what scenarios name.
#include <string>
#include <vector>

#include "impl/limiters/docs_protocols.h"
#include "impl/limiters/in_process_protocol.h"
#include "impl/limiters/kv_fixed_window_lua.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/limiters/kv_lua_limiters.h"
#include "impl/limiters/kv_redis_recipes.h"
#include "impl/limiters/protocol.h"
#include "impl/limiters/sql_protocols.h"

namespace ratelab {
namespace {

std::unique_ptr<Protocol> MakeInProcess(const Policy& policy, const Stores&) {
  return std::make_unique<InProcessProtocol>(policy);
}

std::unique_ptr<Protocol> MakeKvFixedWindowLua(const Policy& policy, const Stores& s) {
  return std::make_unique<KvFixedWindowLua>(*s.kv, policy);
}

std::unique_ptr<Protocol> MakeKvFixedWindowLuaWait(const Policy& policy, const Stores& s) {
  return std::make_unique<KvFixedWindowLua>(*s.kv, policy, /*wait_for_replica=*/true);
}

Status CheckKvGcraLua(const Policy& policy) {
  if (policy.window.count() % 1000 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError("kv-gcra-lua works in whole microseconds; the interval " +
                                    FormatDuration(policy.window) + " is not one");
}

std::unique_ptr<Protocol> MakeKvGcraLua(const Policy& policy, const Stores& s) {
  return std::make_unique<KvGcraLua>(*s.kv, policy);
}

// The common Redis recipes' protocols and the Lua log count whole milliseconds (Date.now()).
Status CheckWholeMillisecondWindow(const Policy& policy) {
  if (policy.window.count() % 1'000'000 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError("this protocol works in whole milliseconds; the window " +
                                    FormatDuration(policy.window) + " is not one");
}

std::unique_ptr<Protocol> MakeDocsUpsert(const Policy& policy, const Stores& s) {
  return std::make_unique<DocsFixedWindowMinute>(*s.docs, policy, /*unique_index=*/false);
}
std::unique_ptr<Protocol> MakeDocsUnique(const Policy& policy, const Stores& s) {
  return std::make_unique<DocsFixedWindowMinute>(*s.docs, policy, /*unique_index=*/true);
}
template <typename P>
std::unique_ptr<Protocol> MakeDocs(const Policy& policy, const Stores& s) {
  return std::make_unique<P>(*s.docs, policy);
}

template <typename P>
std::unique_ptr<Protocol> MakeKv(const Policy& policy, const Stores& s) {
  return std::make_unique<P>(*s.kv, policy);
}

constexpr Duration kNanosecond(1);
constexpr Duration kMillisecond(1'000'000);
constexpr Duration kMicrosecond(1000);

// The table, made once (a protocol's `make` is a std::function, so the table is not constexpr).
const std::vector<ProtocolInfo>& ProtocolTable() {
  static const std::vector<ProtocolInfo> kProtocols = {
      {"memory-fixed-window", StoreKind::kMemory, "best practice", Algorithm::kFixedWindow,
       "in-process aligned fixed window; correct per window, 2N across an edge", nullptr,
       MakeInProcess, kNanosecond},
      {"memory-sliding-log", StoreKind::kMemory, "best practice", Algorithm::kSlidingLog,
       "in-process exact sliding log; never more than N in any W", nullptr, MakeInProcess,
       kNanosecond},
      {"memory-sliding-counter", StoreKind::kMemory, "best practice", Algorithm::kSlidingCounter,
       "in-process sliding window counter; approximate, counts only admitted requests", nullptr,
       MakeInProcess, kNanosecond},
      {"memory-token-bucket", StoreKind::kMemory, "best practice", Algorithm::kTokenBucket,
       "in-process token bucket with exact lazy refill", nullptr, MakeInProcess, kNanosecond},
      {"memory-gcra", StoreKind::kMemory, "best practice", Algorithm::kGcra,
       "in-process GCRA: one timestamp per key, fastest", nullptr, MakeInProcess, kNanosecond},
      {"memory-anchored-window", StoreKind::kMemory, "best practice", Algorithm::kAnchoredWindow,
       "in-process window from the first request (the atomic form of the Node check-then-consume "
       "utility)",
       nullptr, MakeInProcess, kNanosecond},
      {"memory-sliding-log-closed", StoreKind::kMemory, "best practice",
       Algorithm::kSlidingLogClosed, "in-process exact sliding log over closed windows [t - W, t]",
       nullptr, MakeInProcess, kNanosecond},
      {"memory-sliding-counter-anchored", StoreKind::kMemory, "best practice",
       Algorithm::kSlidingCounterAnchored,
       "in-process sliding window counter with windows from the key's first request", nullptr,
       MakeInProcess, kNanosecond},
      {"memory-anchored-window-half-open", StoreKind::kMemory, "best practice",
       Algorithm::kAnchoredWindowHalfOpen,
       "in-process window from the first request whose next opens at start + W (Python's limits)",
       nullptr, MakeInProcess, kNanosecond},
      {"memory-sliding-counter-anchored-floored", StoreKind::kMemory, "best practice",
       Algorithm::kSlidingCounterAnchoredFloored,
       "in-process anchored sliding counter that rounds the weighted count down (Symfony's)",
       nullptr, MakeInProcess, kNanosecond},
      {"memory-token-bucket-intervals", StoreKind::kMemory, "best practice",
       Algorithm::kTokenBucketIntervals,
       "in-process token bucket refilled in whole intervals, the remainder dropped", nullptr,
       MakeInProcess, kNanosecond},
      {"memory-token-bucket-credit", StoreKind::kMemory, "best practice",
       Algorithm::kTokenBucketCredit,
       "in-process token bucket that admits any cost while a token is left, the rest owed", nullptr,
       MakeInProcess, kNanosecond},
      {"kv-fixed-window-lua", StoreKind::kKv, "best practice", Algorithm::kFixedWindow,
       "fixed window as one Lua script (check, INCRBY, PEXPIRE atomically); 2N across an edge",
       nullptr, MakeKvFixedWindowLua, kNanosecond},
      {"kv-fixed-window-lua-wait", StoreKind::kKv, "best practice", Algorithm::kFixedWindow,
       "kv-fixed-window-lua, then WAIT 1 after each admission: one no replica took is a store "
       "failure, not a lost count; but a failover between the script and its WAIT still loses one "
       "(the WAIT asks the new master)",
       nullptr, MakeKvFixedWindowLuaWait, kNanosecond, DecisionClock::kClient,
       /*needs_replica=*/true},
      {"kv-gcra-lua", StoreKind::kKv, "best practice", Algorithm::kGcra,
       "GCRA as one Lua script on one key; atomic, expires when full", CheckKvGcraLua,
       MakeKvGcraLua, kMicrosecond},
      {"kv-sliding-log-lua", StoreKind::kKv, "best practice", Algorithm::kSlidingLog,
       "exact sliding log as one Lua script; logs only admitted requests",
       CheckWholeMillisecondWindow, MakeKv<KvSlidingLogLua>, kMillisecond},
      {"kv-token-bucket-lua", StoreKind::kKv, "a limit service whose rules live in PostgreSQL",
       Algorithm::kTokenBucket,
       "token bucket as one Lua script (HMGET, refill, HSET, PEXPIRE 2x window); atomic", nullptr,
       MakeKv<KvTokenBucketLua>, kMillisecond},
      {"kv-fixed-window-incr-pexpire", StoreKind::kKv, "the common Redis recipes",
       Algorithm::kFixedWindow,
       "INCR then PEXPIRE: a crash between them leaves a key that never expires",
       CheckWholeMillisecondWindow, MakeKv<KvFixedWindowIncrPexpire>, kMillisecond},
      {"kv-sliding-log-zset", StoreKind::kKv, "the common Redis recipes", Algorithm::kSlidingLog,
       "ZREMRANGEBYSCORE, ZADD, ZCARD, EXPIRE pipeline: logs denied requests too (false denials)",
       CheckWholeMillisecondWindow, MakeKv<KvSlidingLogZset>, kMillisecond},
      {"kv-sliding-counter", StoreKind::kKv, "the common Redis recipes", Algorithm::kSlidingCounter,
       "GET previous, INCR current: approximate, and denied requests still count",
       CheckWholeMillisecondWindow, MakeKv<KvSlidingCounter>, kMillisecond},
      {"kv-token-bucket-hgetall-hset", StoreKind::kKv, "the common Redis recipes",
       Algorithm::kTokenBucket,
       "HGETALL, then HSET: concurrent requests spend the same token (races)", nullptr,
       MakeKv<KvTokenBucketHgetallHset>, kMillisecond},
      {"docs-fixed-window-upsert", StoreKind::kDocs, "a MongoDB document per user and minute",
       Algorithm::kFixedWindow,
       "findOneAndUpdate(count < N, $inc, upsert) with no unique index: once full, the upsert "
       "inserts a second document and admits without bound",
       CheckWholeMillisecondWindow, MakeDocsUpsert, kMillisecond},
      {"docs-fixed-window-unique", StoreKind::kDocs, "a MongoDB document per user and minute",
       Algorithm::kFixedWindow,
       "the same with a unique index on (userId, minute): E11000 becomes a 429; 2N across an edge",
       CheckWholeMillisecondWindow, MakeDocsUnique, kMillisecond},
      {"docs-fixed-window-retry", StoreKind::kDocs,
       "a MongoDB document per user and minute, its race retried", Algorithm::kFixedWindow,
       "conditional increment, read, insert, retry once on E11000; correct, 2N across an edge",
       CheckWholeMillisecondWindow, MakeDocs<DocsFixedWindowRetry>, kMillisecond},
      {"docs-check-then-consume", StoreKind::kDocs, "a Node.js check-then-consume helper",
       Algorithm::kAnchoredWindow,
       "findOne, then updateOne($set, upsert) as separate steps: concurrent requests spend the "
       "same token (races)",
       CheckWholeMillisecondWindow, MakeDocs<DocsCheckThenConsume>, kMillisecond},
      {"sql-fixed-window-upsert", StoreKind::kSql, "best practice", Algorithm::kFixedWindow,
       "INSERT ... ON CONFLICT DO UPDATE ... WHERE count + cost <= limit, one statement; 2N across "
       "an edge",
       nullptr, MakeSqlFixedWindowUpsert, kNanosecond},
      {"sql-fixed-window-select-update", StoreKind::kSql, "the usual check-then-act",
       Algorithm::kFixedWindow,
       "SELECT count, then INSERT or UPDATE in a second statement: concurrent requests both see "
       "room (races)",
       nullptr, MakeSqlFixedWindowSelectUpdate, kNanosecond},
      {"sql-token-bucket", StoreKind::kSql, "best practice", Algorithm::kTokenBucket,
       "token bucket as one INSERT ... ON CONFLICT DO UPDATE, refilled in exact integer "
       "nanoseconds",
       CheckSqlTokenBucket, MakeSqlTokenBucket, kNanosecond},
  };
  return kProtocols;
}

}  // namespace

std::string_view StoreKindName(StoreKind kind) {
  switch (kind) {
    case StoreKind::kMemory:
      return "memory";
    case StoreKind::kKv:
      return "kv";
    case StoreKind::kDocs:
      return "docs";
    case StoreKind::kSql:
      return "sql";
  }
  return "";
}

std::span<const ProtocolInfo> Protocols() { return ProtocolTable(); }

const ProtocolInfo* FindProtocol(std::string_view name) {
  for (const ProtocolInfo& p : ProtocolTable()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::shared_ptr<const ProtocolInfo> RegistryProtocol(std::string_view name) {
  const ProtocolInfo* info = FindProtocol(name);
  if (info == nullptr) return nullptr;
  return std::shared_ptr<const ProtocolInfo>(std::shared_ptr<const ProtocolInfo>(), info);
}

Status ProtocolInfo::Suits(const Policy& policy) const {
  if (users_own) return absl::OkStatus();
  if (policy.algorithm != algorithm) {
    return absl::InvalidArgumentError("protocol '" + name + "' implements " +
                                      std::string(AlgorithmName(algorithm)) + ", not " +
                                      std::string(AlgorithmName(policy.algorithm)));
  }
  return check == nullptr ? absl::OkStatus() : check(policy);
}

Result<std::unique_ptr<Protocol>> ProtocolInfo::Instance(const Policy& policy,
                                                         const Stores& stores) const {
  if (Status s = Suits(policy); !s.ok()) return s;
  if ((store == StoreKind::kKv && stores.kv == nullptr) ||
      (store == StoreKind::kDocs && stores.docs == nullptr) ||
      (store == StoreKind::kSql && stores.sql == nullptr)) {
    return absl::InvalidArgumentError("protocol '" + name + "' needs a " +
                                      std::string(StoreKindName(store)) + " store");
  }
  return make(policy, stores);
}

Status CheckProtocol(std::string_view name, const Policy& policy) {
  const ProtocolInfo* info = FindProtocol(name);
  if (info == nullptr) {
    return absl::InvalidArgumentError("unknown protocol '" + std::string(name) +
                                      "' (see `ratelab list protocols`)");
  }
  return info->Suits(policy);
}

Result<std::unique_ptr<Protocol>> MakeProtocol(std::string_view name, const Policy& policy,
                                               const Stores& stores) {
  if (Status s = CheckProtocol(name, policy); !s.ok()) return s;
  return FindProtocol(name)->Instance(policy, stores);
}

}  // namespace ratelab
