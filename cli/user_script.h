// Bring your own Lua: the flags that describe a user's script (--lua FILE, the algorithm it
// claims with --model, and how it is called: --keys, --args, --reply), shared by the commands
// that take one (check, stress). sim/protocol_under_test.h makes a limiter of it.
#ifndef RATELAB_CLI_USER_SCRIPT_H_
#define RATELAB_CLI_USER_SCRIPT_H_

#include <optional>
#include <string>

#include "impl/core/status.h"
#include "sim/protocol_under_test.h"

namespace CLI {
class App;
}

namespace ratelab {

struct UserScriptFlags {
  std::optional<std::string> lua_spec;  // the script and its interface in YAML (sim/lua_spec.h)
  std::optional<std::string> lua;       // the script file; unset: no script
  std::string model;                    // the algorithm it implements
  std::string keys = UserScript().keys;
  std::string args;
  std::string reply = UserScript().reply;
  std::string decide;
  std::optional<DecisionClock> clock;  // --clock; unset: detected (UserScript::clock)
  std::optional<Duration> resolution;  // --resolution; unset: detected (UserScript::resolution)
  ScriptErrorPolicy on_error = ScriptErrorPolicy::kFail;  // --on-script-error
  std::vector<std::string> setup;                         // --setup, each command
  std::optional<std::string> exec;       // --exec: a limiter process's command; unset: none
  std::optional<Duration> exec_timeout;  // --exec-timeout

  // The process, or none when --exec is not given; InvalidArgument when it is given with --lua
  // or --lua-spec or with a script's flags, without --model, or --exec-timeout without it.
  Result<std::optional<UserProcess>> Process() const;

  // Whether a script (--lua or --lua-spec) or a process (--exec) is given.
  bool given() const { return lua || lua_spec || exec; }
  // The script, or none when neither --lua nor --lua-spec is given; InvalidArgument when
  // --model, --keys, --args, --reply, --decide, --clock or --resolution are given without --lua
  // (they mean
  // nothing then), or beside --lua-spec, or when the spec cannot be read.
  Result<std::optional<UserScript>> Script() const;
  // " --lua FILE --model M --keys '...' --args '...' --reply '...' [--decide '...']
  // [--clock C] [--resolution R]", for a reproduce line.
  std::string Flags() const;
};

// Adds --lua (its help: `lua_help`), --model, --keys, --args, --reply, --decide, --clock,
// --resolution, --lua-spec, --exec and --exec-timeout to `command`.
void AddUserScriptFlags(CLI::App& command, UserScriptFlags& flags, const std::string& lua_help);

}  // namespace ratelab

#endif  // RATELAB_CLI_USER_SCRIPT_H_
