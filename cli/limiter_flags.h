// What a checking command (check, stress) is pointed at, as flags: a protocol (the positional
// argument) or a user's script (--lua and its interface, cli/user_script.h), and its policy
// (cli/policy_flags.h). Resolved into the protocol under test and a Policy in one place.
#ifndef RATELAB_CLI_LIMITER_FLAGS_H_
#define RATELAB_CLI_LIMITER_FLAGS_H_

#include <string>

#include "cli/policy_flags.h"
#include "cli/user_script.h"
#include "impl/core/status.h"
#include "model/policy.h"
#include "sim/protocol_under_test.h"

namespace CLI {
class App;
}

namespace ratelab {

struct LimiterFlags {
  explicit LimiterFlags(PolicyDefaults defaults) : defaults(std::move(defaults)) {}

  // Adds the protocol argument, the policy flags and the script's flags to `command`.
  void Add(CLI::App& command, const std::string& protocol_help, const std::string& lua_help);
  // The protocol or the script: ResolveProtocol's errors, and --model and the like without --lua.
  Result<std::shared_ptr<const ProtocolInfo>> Resolve() const;
  // The policy the flags give `resolved` (what Resolve gave), checked against it.
  Result<Policy> PolicyOf(const ProtocolInfo& resolved) const;
  // " PROTOCOL" or " --lua FILE ...", then the policy flags given: for a reproduce line.
  std::string Flags() const;

  const PolicyDefaults defaults;
  std::string protocol;
  PolicyFlags policy;
  UserScriptFlags script;
};

}  // namespace ratelab

#endif  // RATELAB_CLI_LIMITER_FLAGS_H_
