// Bring your own Lua: the flags that describe a user's script (--lua FILE, the algorithm it
// claims with --model, and how it is called: --keys, --args, --reply), shared by the commands
// that take one (check, stress), and the protocol they make of it.
#ifndef RATELAB_CLI_USER_SCRIPT_H_
#define RATELAB_CLI_USER_SCRIPT_H_

#include <memory>
#include <optional>
#include <string>

#include "impl/core/status.h"
#include "sim/scenario.h"

namespace CLI {
class App;
}

namespace ratelab {

struct UserScriptFlags {
  std::optional<std::string> lua;  // the script file; unset: no script
  std::string model;               // the algorithm it implements
  std::string keys = "rl:{key}";
  std::string args;
  std::string reply = "allowed";

  // Whether --model, --keys, --args or --reply were given (they mean nothing without --lua).
  bool DescribesAScript() const;
  // " --lua FILE --model M --keys '...' --args '...' --reply '...'", for a reproduce line.
  std::string Flags() const;
};

// Adds --lua (its help: `lua_help`), --model, --keys, --args and --reply to `command`.
void AddUserScriptFlags(CLI::App& command, UserScriptFlags& flags, const std::string& lua_help);

// The script as a protocol on the kv store, after one request on a scratch MemoryKv has shown
// that it runs and answers in the shape --reply says: InvalidArgument naming what is wrong (an
// unknown --model, a file that cannot be read, a bad template, the script's own error).
Result<std::shared_ptr<const LimiterSpec::Custom>> LoadUserScript(const UserScriptFlags& flags);

}  // namespace ratelab

#endif  // RATELAB_CLI_USER_SCRIPT_H_
