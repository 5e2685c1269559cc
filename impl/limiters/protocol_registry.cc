// The catalogue of protocols: what `ratelab list protocols` shows and what scenarios name.
#include <array>
#include <string>

#include "impl/limiters/in_process_protocol.h"
#include "impl/limiters/kv_fixed_window_lua.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/limiters/protocol.h"

namespace ratelab {
namespace {

std::unique_ptr<Protocol> MakeInProcess(const Policy& policy, const Stores&) {
  return std::make_unique<InProcessProtocol>(policy);
}

std::unique_ptr<Protocol> MakeKvFixedWindowLua(const Policy& policy, const Stores& s) {
  return std::make_unique<KvFixedWindowLua>(*s.kv, policy);
}

Status CheckKvGcraLua(const Policy& policy) {
  if (policy.window.count() % 1000 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError("kv-gcra-lua works in whole microseconds; the interval " +
                                    FormatDuration(policy.window) + " is not one");
}

std::unique_ptr<Protocol> MakeKvGcraLua(const Policy& policy, const Stores& s) {
  return std::make_unique<KvGcraLua>(*s.kv, policy);
}

constexpr Duration kNanosecond(1);
constexpr Duration kMicrosecond(1000);

constexpr std::array<ProtocolInfo, 7> kProtocols = {{
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
    {"kv-fixed-window-lua", "kv", "best practice", "fixed-window",
     "fixed window as one Lua script (check, INCRBY, PEXPIRE atomically); 2N across an edge",
     nullptr, MakeKvFixedWindowLua, kNanosecond},
    {"kv-gcra-lua", "kv", "best practice", "gcra",
     "GCRA as one Lua script on one key; atomic, expires when full", CheckKvGcraLua, MakeKvGcraLua,
     kMicrosecond},
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
  if (info->store == "kv" && stores.kv == nullptr) {
    return absl::InvalidArgumentError("protocol '" + std::string(name) + "' needs a kv store");
  }
  return info->make(policy, stores);
}

}  // namespace ratelab
