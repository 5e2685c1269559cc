#include "cli/user_script.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <sstream>

#include "impl/core/clock.h"
#include "impl/limiters/kv_user_lua.h"
#include "impl/store/memory_kv.h"

namespace ratelab {

bool UserScriptFlags::DescribesAScript() const {
  const UserScriptFlags defaults;
  return !model.empty() || !args.empty() || keys != defaults.keys || reply != defaults.reply;
}

std::string UserScriptFlags::Flags() const {
  const auto quoted = [](const std::string& s) { return "'" + s + "'"; };
  return " --lua " + lua.value_or("") + " --model " + model + " --keys " + quoted(keys) +
         " --args " + quoted(args) + " --reply " + quoted(reply);
}

void AddUserScriptFlags(CLI::App& command, UserScriptFlags& flags, const std::string& lua_help) {
  command.add_option("--lua", flags.lua, lua_help);
  command.add_option("--model", flags.model,
                     "--lua: the algorithm the script implements (see ratelab list algorithms)");
  command
      .add_option("--keys", flags.keys,
                  "--lua: KEYS, comma-separated, with placeholders such as {key}")
      ->capture_default_str();
  command.add_option("--args", flags.args,
                     "--lua: ARGV, comma-separated, with placeholders: {key} {limit} {burst} "
                     "{window_ms} {window_s} {rate_per_s} {period_s} {cost} {now_ms} {now_us} "
                     "{now_s}");
  command
      .add_option("--reply", flags.reply,
                  "--lua: the reply's fields by position: allowed, limited, remaining, "
                  "retry_after_ms, retry_after_s, reset_ms, reset_s, _")
      ->capture_default_str();
}

Result<std::shared_ptr<const LimiterSpec::Custom>> LoadUserScript(const UserScriptFlags& o) {
  if (!o.lua) return absl::InvalidArgumentError("no --lua script given");
  const std::optional<Algorithm> model = AlgorithmFromName(o.model);
  if (!model) {
    std::string known;
    for (const AlgorithmInfo& a : Algorithms())
      known += (known.empty() ? "" : ", ") + std::string(a.name);
    return absl::InvalidArgumentError("--model '" + o.model + "' is not an algorithm (expected " +
                                      known + ")");
  }
  std::ifstream file(*o.lua, std::ios::binary);
  if (!file) return absl::InvalidArgumentError("--lua: cannot read '" + *o.lua + "'");
  std::ostringstream body;
  body << file.rdbuf();
  Result<std::shared_ptr<const UserLuaScript>> parsed =
      ParseUserLua("lua:" + *o.lua, body.str(), o.keys, o.args, o.reply);
  if (!parsed.ok()) return parsed.status();
  std::shared_ptr<const UserLuaScript> script = *std::move(parsed);
  // The protocol sees time as finely as its arguments carry it (a script reading TIME sees
  // microseconds).
  Duration resolution = std::chrono::microseconds(1);
  const std::string all = o.keys + "," + o.args;
  if (all.find("{now_s}") != std::string::npos) resolution = std::chrono::seconds(1);
  if (all.find("{now_ms}") != std::string::npos) resolution = std::chrono::milliseconds(1);
  if (all.find("{now_us}") != std::string::npos) resolution = std::chrono::microseconds(1);
  auto custom = std::make_shared<LimiterSpec::Custom>();
  custom->info =
      ProtocolInfo{"user lua", "kv",    "the user", Describe(*model).name, "a user's Lua script",
                   nullptr,    nullptr, resolution};
  custom->make = [script](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<KvUserLua>(*stores.kv, policy, script));
  };
  // One request on a scratch store, to report a broken script before any search.
  const Scenario defaults;
  ManualClock clock(defaults.start);
  MemoryKv kv(clock);
  const Policy probe_policy = Describe(*model).bucket
                                  ? Policy::Bucket(*model, 1, std::chrono::seconds(1))
                                  : Policy::Window(*model, 1, std::chrono::seconds(1));
  KvUserLua probe(kv, probe_policy, script);
  InlineExecutor inline_executor;
  Context ctx(inline_executor);
  const Request request{"user", "u1", "/api", 1, defaults.start};
  const Result<Decision> first = RunInline(probe.Decide(ctx, request));
  if (!first.ok()) return first.status();
  return std::shared_ptr<const LimiterSpec::Custom>(std::move(custom));
}

}  // namespace ratelab
