#include "sim/protocol_under_test.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "impl/core/input_file.h"
#include "impl/limiters/exec_protocol.h"
#include "impl/limiters/kv_user_lua.h"

namespace ratelab {

namespace {

struct ClockName {
  DecisionClock clock;
  std::string_view name;
};
constexpr std::array<ClockName, 2> kClockNames = {
    {{DecisionClock::kStore, "server"}, {DecisionClock::kClient, "client"}}};

// redis.call('TIME'), redis.pcall("time"), ...: Redis takes command names in any case.
bool CallsTime(const std::string& body) {
  const std::regex calls_time(R"(call\s*\(\s*['"]time['"]\s*\))", std::regex::icase);
  return std::regex_search(body, calls_time);
}

// The placeholders the script's KEYS and ARGV carry.
std::set<std::string> Placeholders(const UserLuaScript& script) {
  std::set<std::string> names;
  for (const auto* list : {&script.keys, &script.args}) {
    for (const ScriptTemplate& t : *list) names.insert(t.names().begin(), t.names().end());
  }
  return names;
}

// Whether they carry the client's `now`, or a window computed from it.
bool SendsNow(const std::set<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.starts_with("now_") || n.starts_with("window_index") || n.starts_with("window_start");
  });
}

// The finest time the script sees, and why: as finely as its arguments carry `now`, TIME's
// microseconds for a script that reads it, and the store's milliseconds for one whose windows
// are keys' times to live (Redis expires keys on a millisecond clock).
struct Resolution {
  Duration finest;
  std::string why;
};
Resolution ScriptResolution(const std::set<std::string>& names, DecisionClock clock,
                            bool calls_time) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  if (clock == DecisionClock::kStore) {
    return calls_time ? Resolution{microseconds(1), "it reads the time with TIME, in microseconds"}
                      : Resolution{milliseconds(1), "the store expires keys by the millisecond"};
  }
  // The time placeholders, finest first.
  const std::pair<Duration, std::string_view> kSent[] = {{microseconds(1), "now_us"},
                                                         {microseconds(1), "now_s_float"},
                                                         {milliseconds(1), "now_ms"},
                                                         {std::chrono::seconds(1), "now_s"}};
  for (const auto& [finest, name] : kSent) {
    if (names.contains(std::string(name))) {
      return {finest, "it is sent the time as {" + std::string(name) + "}"};
    }
  }
  return {microseconds(1), "it is sent no finer time than its window"};
}

// The entry of a user's own protocol, named `name`, keeping its state in `store`, held to `model`.
std::shared_ptr<ProtocolInfo> UsersOwn(std::string name, StoreKind store, Algorithm model,
                                       std::string_view summary) {
  auto info = std::make_shared<ProtocolInfo>();
  info->users_own = true;
  info->name = std::move(name);
  info->store = store;
  info->source = "the user";
  info->algorithm = model;
  info->summary = summary;
  return info;
}

Result<std::shared_ptr<const ProtocolInfo>> LoadScript(const UserScript& s) {
  Result<std::string> body = ReadInputFile(s.path, kLuaScript);
  if (!body.ok()) return body.status();
  const std::string name = "lua:" + s.path;
  Result<std::shared_ptr<const UserLuaScript>> parsed =
      ParseUserLua(name, *body, s.keys, s.args, s.reply, s.decide);
  if (!parsed.ok()) return parsed.status();
  auto with_policy = std::make_shared<UserLuaScript>(**parsed);
  with_policy->on_error = s.on_error;
  Result<std::vector<std::vector<ScriptTemplate>>> setup = ParseSetup(s.setup);
  if (!setup.ok()) return setup.status();
  with_policy->setup = *std::move(setup);
  std::shared_ptr<const UserLuaScript> script = std::move(with_policy);
  std::shared_ptr<ProtocolInfo> custom =
      UsersOwn(name, StoreKind::kKv, s.model, "a user's Lua script");
  const std::set<std::string> names = Placeholders(*script);
  const bool calls_time = CallsTime(*body);
  custom->clock = s.clock.value_or(DetectScriptClock(calls_time, SendsNow(names)));
  const Resolution resolution =
      s.resolution ? Resolution{*s.resolution, "as given by --resolution or the spec"}
                   : ScriptResolution(names, custom->clock, calls_time);
  custom->time_resolution = resolution.finest;
  // A window kept as a key's time to live opens and closes on the store's milliseconds.
  custom->edges_on_ticks = !s.resolution && custom->clock == DecisionClock::kStore && !calls_time;
  // The unit its waits come in, as its reply names them.
  for (const std::string& f : script->reply) {
    if (f == "wait_s") custom->wait_unit = std::chrono::seconds(1);
    if (f == "wait_ms") custom->wait_unit = std::chrono::milliseconds(1);
    if (f == "wait_us") custom->wait_unit = std::chrono::microseconds(1);
  }
  custom->make = [script](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<KvUserLua>(*stores.kv, policy, script));
  };
  custom->resolution_why = resolution.why;
  custom->window_offset = s.window_offset;
  custom->delays_admissions =
      std::any_of(script->reply.begin(), script->reply.end(),
                  [](const std::string& f) { return f.starts_with("wait_"); });
  return std::shared_ptr<const ProtocolInfo>(std::move(custom));
}

Result<std::shared_ptr<const ProtocolInfo>> StartProcess(const UserProcess& p) {
  Result<std::shared_ptr<ExecSession>> session =
      ExecSession::Start(p.command, p.timeout, p.directory);
  if (!session.ok()) return session.status();
  const ExecHello& hello = (*session)->hello();
  std::shared_ptr<ProtocolInfo> custom =
      UsersOwn("exec:" + (hello.name.empty() ? p.command : hello.name), StoreKind::kMemory, p.model,
               "a user's limiter process");
  custom->time_resolution = hello.resolution;
  // It decides when the library is called, on the run's clock: as a store that reads its own.
  custom->clock = DecisionClock::kStore;
  custom->make = [session = *session](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<ExecProtocol>(session, policy, stores.clock));
  };
  custom->resolution_why = hello.resolution == Duration(1)
                               ? "it gave no coarser resolution_ns in its hello"
                               : "its hello says it decides at resolution_ns " +
                                     std::to_string(hello.resolution.count());
  custom->delays_admissions = hello.wait;
  return std::shared_ptr<const ProtocolInfo>(std::move(custom));
}

// One decision of `protocol` at `now`, on this thread.
Status DecideOnce(Protocol& protocol, Instant now) {
  InlineExecutor inline_executor;
  Context ctx(inline_executor, /*request=*/0);
  const Request request{"user", "u1", "/api", 1, now};
  const Result<Decision> first = RunInline(protocol.Decide(ctx, request));
  return first.ok() ? absl::OkStatus() : first.status();
}

}  // namespace

std::shared_ptr<const ProtocolInfo> InProcessProtocol(const UserInProcess& limiter) {
  std::shared_ptr<ProtocolInfo> custom =
      UsersOwn(limiter.name, StoreKind::kMemory, limiter.model, "a user's limiter in process");
  custom->time_resolution = limiter.resolution;
  // It decides when it is called, on the run's clock: as a store that reads its own.
  custom->clock = DecisionClock::kStore;
  custom->make = limiter.make;
  custom->resolution_why = limiter.resolution == Duration(1) ? "it was given no coarser resolution"
                                                             : "it was given that resolution";
  return custom;
}

std::string_view ScriptClockName(DecisionClock clock) {
  for (const ClockName& c : kClockNames) {
    if (c.clock == clock) return c.name;
  }
  return "";
}

Result<DecisionClock> ParseScriptClock(std::string_view name) {
  for (const ClockName& c : kClockNames) {
    if (c.name == name) return c.clock;
  }
  return absl::InvalidArgumentError("unknown clock '" + std::string(name) +
                                    "' (expected server or client)");
}

DecisionClock DetectScriptClock(bool calls_time, bool sends_now) {
  return calls_time || !sends_now ? DecisionClock::kStore : DecisionClock::kClient;
}

Status TryOnce(const ProtocolInfo& protocol, Kv& kv, const Policy& policy, Instant now) {
  if (!protocol.users_own) return absl::OkStatus();
  Result<std::unique_ptr<Protocol>> probe = protocol.Instance(policy, {&kv, nullptr});
  if (!probe.ok()) return probe.status();
  return DecideOnce(**probe, now);
}

Status TryProcessOnce(const ProtocolInfo& protocol, const Policy& policy, Instant now) {
  if (!protocol.IsProcess()) return absl::OkStatus();
  Result<std::unique_ptr<Protocol>> probe = protocol.Instance(policy, {});
  if (!probe.ok()) return probe.status();
  // A refused policy is bad input; any other failure is the limiter's, which the run finds.
  const Status tried = DecideOnce(**probe, now);
  return absl::IsInvalidArgument(tried) ? tried : absl::OkStatus();
}

std::vector<CheckId> DefaultChecks(const ProtocolInfo& protocol) {
  std::vector<CheckId> checks = {CheckId::kPromise, CheckId::kFalseDenials};
  if (protocol.store != StoreKind::kMemory) checks.push_back(CheckId::kKeyExpiry);
  return checks;
}

LimiterSpec LimiterOf(std::shared_ptr<const ProtocolInfo> protocol, const Policy& policy) {
  LimiterSpec spec;
  spec.protocol = std::move(protocol);
  spec.policy = policy;
  return spec;
}

Status NotBothProtocolAndScript(std::string_view protocol, bool script, bool process) {
  if (int(!protocol.empty()) + int(script) + int(process) > 1) {
    return absl::InvalidArgumentError("give one of a protocol, --lua and --exec");
  }
  return absl::OkStatus();
}

Result<std::shared_ptr<const ProtocolInfo>> ResolveProtocol(
    std::string_view protocol, const std::optional<UserScript>& script,
    const std::optional<UserProcess>& process) {
  if (Status s = NotBothProtocolAndScript(protocol, script.has_value(), process.has_value());
      !s.ok()) {
    return s;
  }
  if (script) return LoadScript(*script);
  if (process) return StartProcess(*process);
  if (protocol.empty()) {
    return absl::InvalidArgumentError(
        "name a protocol (see ratelab list protocols), or give --lua FILE or --exec COMMAND");
  }
  std::shared_ptr<const ProtocolInfo> registry = RegistryProtocol(protocol);
  if (registry == nullptr) {
    return absl::InvalidArgumentError("unknown protocol '" + std::string(protocol) +
                                      "' (see ratelab list protocols)");
  }
  return registry;
}

}  // namespace ratelab
