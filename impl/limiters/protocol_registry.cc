// The catalogue of protocols: what `ratelab list protocols` shows and what scenarios name.
#include <array>
#include <string>

#include "impl/limiters/docs_protocols.h"
#include "impl/limiters/in_process_protocol.h"
#include "impl/limiters/kv_fixed_window_lua.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/limiters/kv_lua_limiters.h"
#include "impl/limiters/kv_seed002.h"
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

// The seed 002 protocols and the Lua log count whole milliseconds (Date.now()).
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

constexpr std::array<ProtocolInfo, 25> kProtocols = {{
    {"memory-fixed-window", "memory", "best practice", "fixed-window",
     "in-process aligned fixed window; correct per window, 2N across an edge", nullptr,
     MakeInProcess, kNanosecond},
    {"memory-sliding-log", "memory", "best practice", "sliding-log",
     "in-process exact sliding log; never more than N in any W", nullptr, MakeInProcess,
     kNanosecond},
    {"memory-sliding-counter", "memory", "best practice", "sliding-counter",
     "in-process sliding window counter; approximate, counts only admitted requests", nullptr,
     MakeInProcess, kNanosecond},
    {"memory-token-bucket", "memory", "best practice", "token-bucket",
     "in-process token bucket with exact lazy refill", nullptr, MakeInProcess, kNanosecond},
    {"memory-gcra", "memory", "best practice", "gcra",
     "in-process GCRA: one timestamp per key, fastest", nullptr, MakeInProcess, kNanosecond},
    {"memory-anchored-window", "memory", "best practice", "anchored-window",
     "in-process window from the first request (the atomic form of the Node check-then-consume "
     "utility)",
     nullptr, MakeInProcess, kNanosecond},
    {"memory-sliding-log-closed", "memory", "best practice", "sliding-log-closed",
     "in-process exact sliding log over closed windows [t - W, t]", nullptr, MakeInProcess,
     kNanosecond},
    {"memory-sliding-counter-anchored", "memory", "best practice", "sliding-counter-anchored",
     "in-process sliding window counter with windows from the key's first request", nullptr,
     MakeInProcess, kNanosecond},
    {"memory-token-bucket-intervals", "memory", "best practice", "token-bucket-intervals",
     "in-process token bucket refilled in whole intervals, the remainder dropped", nullptr,
     MakeInProcess, kNanosecond},
    {"kv-fixed-window-lua", "kv", "best practice", "fixed-window",
     "fixed window as one Lua script (check, INCRBY, PEXPIRE atomically); 2N across an edge",
     nullptr, MakeKvFixedWindowLua, kNanosecond},
    {"kv-fixed-window-lua-wait", "kv", "best practice", "fixed-window",
     "kv-fixed-window-lua, then WAIT 1 after each admission: one no replica took is a store "
     "failure, not a lost count; but a failover between the script and its WAIT still loses one "
     "(the WAIT asks the new master)",
     nullptr, MakeKvFixedWindowLuaWait, kNanosecond, DecisionClock::kClient,
     /*needs_replica=*/true},
    {"kv-gcra-lua", "kv", "best practice", "gcra",
     "GCRA as one Lua script on one key; atomic, expires when full", CheckKvGcraLua, MakeKvGcraLua,
     kMicrosecond},
    {"kv-sliding-log-lua", "kv", "best practice", "sliding-log",
     "exact sliding log as one Lua script; logs only admitted requests",
     CheckWholeMillisecondWindow, MakeKv<KvSlidingLogLua>, kMillisecond},
    {"kv-token-bucket-lua", "kv", "the PostgreSQL-rules limit service", "token-bucket",
     "token bucket as one Lua script (HMGET, refill, HSET, PEXPIRE 2x window); atomic", nullptr,
     MakeKv<KvTokenBucketLua>, kMillisecond},
    {"kv-fixed-window-incr-pexpire", "kv", "the Redis algorithms guide", "fixed-window",
     "INCR then PEXPIRE: a crash between them leaves a key that never expires",
     CheckWholeMillisecondWindow, MakeKv<KvFixedWindowIncrPexpire>, kMillisecond},
    {"kv-sliding-log-zset", "kv", "the Redis algorithms guide", "sliding-log",
     "ZREMRANGEBYSCORE, ZADD, ZCARD, EXPIRE pipeline: logs denied requests too (false denials)",
     CheckWholeMillisecondWindow, MakeKv<KvSlidingLogZset>, kMillisecond},
    {"kv-sliding-counter", "kv", "the Redis algorithms guide", "sliding-counter",
     "GET previous, INCR current: approximate, and denied requests still count",
     CheckWholeMillisecondWindow, MakeKv<KvSlidingCounter>, kMillisecond},
    {"kv-token-bucket-hgetall-hset", "kv", "the Redis algorithms guide", "token-bucket",
     "HGETALL, then HSET: concurrent requests spend the same token (races)", nullptr,
     MakeKv<KvTokenBucketHgetallHset>, kMillisecond},
    {"docs-fixed-window-upsert", "docs", "the MongoDB fixed-window service", "fixed-window",
     "findOneAndUpdate(count < N, $inc, upsert) with no unique index: once full, the upsert "
     "inserts a second document and admits without bound",
     CheckWholeMillisecondWindow, MakeDocsUpsert, kMillisecond},
    {"docs-fixed-window-unique", "docs", "the MongoDB fixed-window service", "fixed-window",
     "the same with a unique index on (userId, minute): E11000 becomes a 429; 2N across an edge",
     CheckWholeMillisecondWindow, MakeDocsUnique, kMillisecond},
    {"docs-fixed-window-retry", "docs", "the careful MongoDB fixed-window service", "fixed-window",
     "conditional increment, read, insert, retry once on E11000; correct, 2N across an edge",
     CheckWholeMillisecondWindow, MakeDocs<DocsFixedWindowRetry>, kMillisecond},
    {"docs-check-then-consume", "docs", "the Node check-then-consume utility", "anchored-window",
     "findOne, then updateOne($set, upsert) as separate steps: concurrent requests spend the "
     "same token (races)",
     CheckWholeMillisecondWindow, MakeDocs<DocsCheckThenConsume>, kMillisecond},
    {"sql-fixed-window-upsert", "sql", "best practice", "fixed-window",
     "INSERT ... ON CONFLICT DO UPDATE ... WHERE count + cost <= limit, one statement; 2N across "
     "an edge",
     nullptr, MakeSqlFixedWindowUpsert, kNanosecond},
    {"sql-fixed-window-select-update", "sql", "the usual check-then-act", "fixed-window",
     "SELECT count, then INSERT or UPDATE in a second statement: concurrent requests both see "
     "room (races)",
     nullptr, MakeSqlFixedWindowSelectUpdate, kNanosecond},
    {"sql-token-bucket", "sql", "best practice", "token-bucket",
     "token bucket as one INSERT ... ON CONFLICT DO UPDATE, refilled in exact integer "
     "nanoseconds",
     CheckSqlTokenBucket, MakeSqlTokenBucket, kNanosecond},
}};

}  // namespace

std::span<const ProtocolInfo> Protocols() { return kProtocols; }

const ProtocolInfo* FindProtocol(std::string_view name) {
  for (const ProtocolInfo& p : kProtocols) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Status CheckProtocol(std::string_view name, const Policy& policy) {
  const ProtocolInfo* info = FindProtocol(name);
  if (info == nullptr) {
    return absl::InvalidArgumentError("unknown protocol '" + std::string(name) +
                                      "' (see `ratelab list protocols`)");
  }
  if (Describe(policy.algorithm).name != info->algorithm) {
    return absl::InvalidArgumentError("protocol '" + std::string(name) + "' implements " +
                                      std::string(info->algorithm) + ", not " +
                                      std::string(Describe(policy.algorithm).name));
  }
  return info->check == nullptr ? absl::OkStatus() : info->check(policy);
}

Result<std::unique_ptr<Protocol>> MakeProtocol(std::string_view name, const Policy& policy,
                                               const Stores& stores) {
  if (Status s = CheckProtocol(name, policy); !s.ok()) return s;
  const ProtocolInfo* info = FindProtocol(name);
  if ((info->store == "kv" && stores.kv == nullptr) ||
      (info->store == "docs" && stores.docs == nullptr) ||
      (info->store == "sql" && stores.sql == nullptr)) {
    return absl::InvalidArgumentError("protocol '" + std::string(name) + "' needs a " +
                                      std::string(info->store) + " store");
  }
  return info->make(policy, stores);
}

}  // namespace ratelab
