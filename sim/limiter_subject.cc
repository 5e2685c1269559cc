#include "sim/limiter_subject.h"

#include <fstream>
#include <set>
#include <sstream>

#include "impl/limiters/kv_user_lua.h"

namespace ratelab {

namespace {

// The finest time the script sees: as finely as its arguments carry `now` (a script reading TIME
// sees microseconds).
Duration ScriptResolution(const UserLuaScript& script) {
  std::set<std::string> names;
  for (const auto* list : {&script.keys, &script.args}) {
    for (const ScriptTemplate& t : *list) names.insert(t.names().begin(), t.names().end());
  }
  if (names.contains("now_us") || names.contains("now_s_float"))
    return std::chrono::microseconds(1);
  if (names.contains("now_ms")) return std::chrono::milliseconds(1);
  if (names.contains("now_s")) return std::chrono::seconds(1);
  return std::chrono::microseconds(1);
}

Result<LimiterSubject> LoadScript(const UserScript& s) {
  const std::optional<Algorithm> model = AlgorithmFromName(s.model);
  if (!model) {
    std::string known;
    for (const AlgorithmInfo& a : Algorithms()) {
      known += (known.empty() ? "" : ", ") + std::string(a.name);
    }
    return absl::InvalidArgumentError("--model '" + s.model + "' is not an algorithm (expected " +
                                      known + ")");
  }
  std::ifstream file(s.path, std::ios::binary);
  if (!file) return absl::InvalidArgumentError("--lua: cannot read '" + s.path + "'");
  std::ostringstream body;
  body << file.rdbuf();
  const std::string name = "lua:" + s.path;
  Result<std::shared_ptr<const UserLuaScript>> parsed =
      ParseUserLua(name, body.str(), s.keys, s.args, s.reply, s.decide);
  if (!parsed.ok()) return parsed.status();
  std::shared_ptr<const UserLuaScript> script = *std::move(parsed);
  auto custom = std::make_shared<LimiterSpec::Custom>();
  custom->info = ProtocolInfo{"user lua",
                              "kv",
                              "the user",
                              Describe(*model).name,
                              "a user's Lua script",
                              nullptr,
                              nullptr,
                              ScriptResolution(*script)};
  custom->make = [script](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<KvUserLua>(*stores.kv, policy, script));
  };
  LimiterSubject subject;
  subject.name = name;
  subject.info = &custom->info;
  subject.custom = std::move(custom);
  return subject;
}

}  // namespace

Status TryOnce(const LimiterSubject& subject, Kv& kv) {
  if (!subject.custom) return absl::OkStatus();
  const Algorithm model = *AlgorithmFromName(subject.info->algorithm);
  const Policy policy = Describe(model).bucket ? Policy::Bucket(model, 1, std::chrono::seconds(1))
                                               : Policy::Window(model, 1, std::chrono::seconds(1));
  Result<std::unique_ptr<Protocol>> probe = subject.Make(policy, {&kv, nullptr});
  if (!probe.ok()) return probe.status();
  InlineExecutor inline_executor;
  Context ctx(inline_executor);
  const Request request{"user", "u1", "/api", 1, kDefaultScenarioStart};
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

Result<LimiterSubject> ResolveLimiter(std::string_view protocol,
                                      const std::optional<UserScript>& script) {
  if (script && !protocol.empty()) {
    return absl::InvalidArgumentError("give a protocol or --lua, not both");
  }
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
