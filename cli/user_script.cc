#include "cli/user_script.h"

#include <CLI/CLI.hpp>

#include "cli/options.h"
#include "sim/lua_spec.h"

namespace ratelab {

namespace {

// --lua or --exec needs --model: the algorithm it is held to.
Result<Algorithm> ModelOf(std::string_view flag, const std::string& model) {
  if (model.empty()) {
    return absl::InvalidArgumentError(
        std::string(flag) +
        " needs --model, the algorithm whose promise the limiter is held to (one of " +
        AlgorithmChoices() + ")");
  }
  const std::optional<Algorithm> algorithm = AlgorithmNamed(model);
  if (!algorithm) {
    return absl::InvalidArgumentError("--model '" + model + "' is not an algorithm (expected " +
                                      AlgorithmChoices() + ")");
  }
  return *algorithm;
}

}  // namespace

Result<std::optional<UserProcess>> UserScriptFlags::Process() const {
  if (!exec) {
    if (exec_timeout) return absl::InvalidArgumentError("--exec-timeout is for --exec");
    return std::optional<UserProcess>();
  }
  if (lua || lua_spec) return absl::InvalidArgumentError("give --lua or --exec, not both");
  const UserScriptFlags defaults;
  if (!args.empty() || keys != defaults.keys || reply != defaults.reply || !decide.empty() ||
      clock.has_value() || resolution.has_value() || on_error != defaults.on_error ||
      !setup.empty()) {
    return absl::InvalidArgumentError(
        "--keys, --args, --reply, --decide, --clock, --resolution, --on-script-error and --setup "
        "describe a --lua script; a process given by --exec says what it answers in its hello "
        "(docs/exec-protocol.md)");
  }
  Result<Algorithm> algorithm = ModelOf("--exec", model);
  if (!algorithm.ok()) return algorithm.status();
  UserProcess process;
  process.command = *exec;
  process.model = *algorithm;
  if (exec_timeout) {
    process.timeout = std::chrono::ceil<std::chrono::milliseconds>(*exec_timeout);
  }
  return std::optional<UserProcess>(std::move(process));
}

Result<std::optional<UserScript>> UserScriptFlags::Script() const {
  const UserScriptFlags defaults;
  if (exec) return std::optional<UserScript>();  // Process() checks the flags beside it
  const bool describes = !model.empty() || !args.empty() || keys != defaults.keys ||
                         reply != defaults.reply || !decide.empty() || clock.has_value() ||
                         resolution.has_value();
  if (lua_spec) {
    if (lua || describes) {
      return absl::InvalidArgumentError(
          "give --lua-spec, or --lua with --model, --keys, --args, --reply, --decide, --clock "
          "and --resolution; not both");
    }
    Result<UserScript> spec = LoadLuaSpec(*lua_spec);
    if (!spec.ok()) return spec.status();
    spec->on_error = on_error;
    if (!setup.empty()) {
      return absl::InvalidArgumentError("give --setup in the spec (setup:) beside --lua-spec");
    }
    return std::optional<UserScript>(*std::move(spec));
  }
  if (!lua) {
    if (on_error != defaults.on_error || !setup.empty()) {
      return absl::InvalidArgumentError(
          std::string(setup.empty() ? "--on-script-error" : "--setup") +
          " is for a script (--lua or --lua-spec)");
    }
    if (describes) {
      return absl::InvalidArgumentError(
          "--model, --keys, --args, --reply, --decide, --clock and --resolution describe a --lua "
          "script");
    }
    return std::optional<UserScript>();
  }
  Result<Algorithm> algorithm = ModelOf("--lua", model);
  if (!algorithm.ok()) return algorithm.status();
  return std::optional<UserScript>(
      UserScript{*lua, *algorithm, keys, args, reply, decide, clock, resolution, on_error, setup});
}

std::string UserScriptFlags::Flags() const {
  const std::string on_error_flag =
      on_error == ScriptErrorPolicy::kFail
          ? ""
          : " --on-script-error " + std::string(ScriptErrorPolicyName(on_error));
  if (lua_spec) return " --lua-spec " + *lua_spec + on_error_flag;
  if (exec) {
    return " --exec " + QuoteWord(*exec) + " --model " + model +
           (exec_timeout ? " --exec-timeout " + FormatDuration(*exec_timeout) : "");
  }
  return " --lua " + lua.value_or("") + " --model " + model + " --keys " + QuoteWord(keys) +
         " --args " + QuoteWord(args) + " --reply " + QuoteWord(reply) +
         (decide.empty() ? "" : " --decide " + QuoteWord(decide)) +
         (clock ? " --clock " + std::string(ScriptClockName(*clock)) : "") +
         (resolution ? " --resolution " + FormatDuration(*resolution) : "") + on_error_flag + [&] {
           std::string out;
           for (const std::string& command : setup) out += " --setup " + QuoteWord(command);
           return out;
         }();
}

void AddUserScriptFlags(CLI::App& command, UserScriptFlags& flags, const std::string& lua_help) {
  command.add_option("--lua", flags.lua, lua_help);
  command.add_option("--model", flags.model,
                     "--lua, --exec: the algorithm the limiter implements (see ratelab list "
                     "algorithms)");
  command.add_option("--exec", flags.exec,
                     "Check your own limiter, in any language, run as this command (its words, no "
                     "shell) and spoken to in line-delimited JSON on its stdin and stdout "
                     "(docs/exec-protocol.md), with --model");
  AddParsed(command, "--exec-timeout", flags.exec_timeout, ParsePositiveDuration,
            "--exec: the longest the process may take to answer before the run fails (default "
            "10s)");
  command
      .add_option("--keys", flags.keys,
                  "--lua: KEYS, comma-separated, with placeholders such as {key}")
      ->capture_default_str();
  command.add_option("--args", flags.args,
                     "--lua: ARGV, comma-separated, with placeholders: {key} {limit} {burst} "
                     "{window_ms} {window_s} {rate_per_s} {period_s} {cost} {now_ms} {now_us} "
                     "{now_s} {now_s_float} {window_index} {window_start_ms} {window_start_s} "
                     "{request_id}, "
                     "arithmetic such as {rate_per_s*1000} or {ceil(burst/rate_per_s)+1}, and {{ "
                     "}} for a literal brace");
  command
      .add_option("--reply", flags.reply,
                  "--lua: the reply's fields by position: allowed, limited, remaining, "
                  "retry_after_ms, retry_after_s, reset_ms, reset_s, wait_ms, wait_us, wait_s (an "
                  "admission's delay before it is forwarded), _ (with --decide, any name)")
      ->capture_default_str();
  command.add_option("--lua-spec", flags.lua_spec,
                     "A YAML file naming the script and its interface (script, model, keys, "
                     "args, reply, decide), instead of --lua and its flags (docs/lua-spec.md)");
  command.add_option("--decide", flags.decide,
                     "--lua: the decision as an expression over the reply's fields and the "
                     "placeholders, for a script that answers with a count or a status, e.g. "
                     "'count <= {limit}', 'remaining >= 0', 'status == 1'");
  AddParsed(command, "--clock", flags.clock, ParseScriptClock,
            "--lua: whose clock the script decides on: server (it reads TIME, or its window is a "
            "key's time to live: judged when the store runs it) or client (the now it is sent: "
            "judged when the client sent it); default: server when the script calls TIME or its "
            "keys and args carry no {now_*} placeholder, else client");
  AddParsed(command, "--resolution", flags.resolution, ParsePositiveDuration,
            "--lua: the finest time the script sees, at which it is judged, e.g. 1s for one that "
            "reads only redis.call('TIME')[1]; default: from its placeholders ({now_s}: 1s, "
            "{now_ms}: 1ms), 1us for TIME, 1ms for a window kept as a key's time to live");
  command.add_option(
      "--setup", flags.setup,
      "--lua: a command the script's library runs for each key before its first request (a "
      "limiter's configuration written once), words separated by spaces, each a template: "
      "'HSET rl:{{{key}}}:config rate {rate_per_s} burst {burst}'; again for each command");
  AddParsed(command, "--on-script-error", flags.on_error, ParseScriptErrorPolicy,
            "What the script's client does when the script errs: fail (a finding: the limiter "
            "failed), or admit or deny the request, as libraries that fail open or closed do, "
            "judged as such (default: fail)");
}

}  // namespace ratelab
