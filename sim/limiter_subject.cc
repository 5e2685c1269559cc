#include "sim/limiter_subject.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "impl/core/input_file.h"
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

Result<LimiterSubject> LoadScript(const UserScript& s) {
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
  auto custom = std::make_shared<ProtocolInfo>();
  custom->name = "user lua";
  custom->store = StoreKind::kKv;
  custom->source = "the user";
  custom->algorithm = s.model;
  custom->summary = "a user's Lua script";
  const std::set<std::string> names = Placeholders(*script);
  const bool calls_time = CallsTime(*body);
  custom->clock = s.clock.value_or(DetectScriptClock(calls_time, SendsNow(names)));
  const Resolution resolution =
      s.resolution ? Resolution{*s.resolution, "as given by --resolution or the spec"}
                   : ScriptResolution(names, custom->clock, calls_time);
  custom->time_resolution = resolution.finest;
  custom->make = [script](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<KvUserLua>(*stores.kv, policy, script));
  };
  LimiterSubject subject;
  subject.name = name;
  subject.info = custom.get();
  subject.custom = std::move(custom);
  subject.resolution_why = resolution.why;
  subject.delays_admissions =
      std::any_of(script->reply.begin(), script->reply.end(),
                  [](const std::string& f) { return f.starts_with("wait_"); });
  return subject;
}

}  // namespace

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

Status TryOnce(const LimiterSubject& subject, Kv& kv, Instant now) {
  if (!subject.custom) return absl::OkStatus();
  const Algorithm model = subject.info->algorithm;
  const Policy policy = Describe(model).bucket ? Policy::Bucket(model, 1, std::chrono::seconds(1))
                                               : Policy::Window(model, 1, std::chrono::seconds(1));
  Result<std::unique_ptr<Protocol>> probe = subject.Make(policy, {&kv, nullptr});
  if (!probe.ok()) return probe.status();
  InlineExecutor inline_executor;
  Context ctx(inline_executor, /*request=*/0);
  const Request request{"user", "u1", "/api", 1, now};
  const Result<Decision> first = RunInline((*probe)->Decide(ctx, request));
  return first.ok() ? absl::OkStatus() : first.status();
}

Status LimiterSubject::CheckPolicy(const Policy& policy) const {
  return custom ? absl::OkStatus() : CheckProtocol(name, policy);
}

LimiterSpec LimiterSubject::Spec(const Policy& policy) const {
  LimiterSpec spec;
  spec.protocol = name;
  spec.policy = policy;
  spec.custom = custom;
  return spec;
}

Result<std::unique_ptr<Protocol>> LimiterSubject::Make(const Policy& policy,
                                                       const Stores& stores) const {
  return custom ? custom->make(policy, stores) : MakeProtocol(name, policy, stores);
}

Status NotBothProtocolAndScript(std::string_view protocol, bool script) {
  if (script && !protocol.empty()) {
    return absl::InvalidArgumentError("give a protocol or --lua, not both");
  }
  return absl::OkStatus();
}

Result<LimiterSubject> ResolveLimiter(std::string_view protocol,
                                      const std::optional<UserScript>& script) {
  if (Status s = NotBothProtocolAndScript(protocol, script.has_value()); !s.ok()) return s;
  if (script) return LoadScript(*script);
  if (protocol.empty()) {
    return absl::InvalidArgumentError(
        "name a protocol (see ratelab list protocols) or give --lua FILE");
  }
  LimiterSubject subject;
  subject.name = std::string(protocol);
  subject.info = FindProtocol(protocol);
  if (subject.info == nullptr) {
    return absl::InvalidArgumentError("unknown protocol '" + subject.name +
                                      "' (see ratelab list protocols)");
  }
  return subject;
}

}  // namespace ratelab
