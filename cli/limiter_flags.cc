#include "cli/limiter_flags.h"

#include <CLI/CLI.hpp>

#include "impl/limiters/window_offset.h"

namespace ratelab {

void LimiterFlags::Add(CLI::App& command, const std::string& protocol_help,
                       const std::string& lua_help) {
  command.add_option("protocol", protocol, protocol_help);
  AddPolicyFlags(command, policy, defaults);
  AddUserScriptFlags(command, script, lua_help);
}

Result<std::shared_ptr<const ProtocolInfo>> LimiterFlags::Resolve() const {
  if (Status s = NotBothProtocolAndScript(protocol, script.lua || script.lua_spec,
                                          script.exec.has_value());
      !s.ok()) {
    return s;
  }
  Result<std::optional<UserProcess>> process = script.Process();
  if (!process.ok()) return process.status();
  Result<std::optional<UserScript>> user_script = script.Script();
  if (!user_script.ok()) return user_script.status();
  return ResolveProtocol(protocol, *user_script, *process);
}

Result<Policy> LimiterFlags::PolicyOf(const ProtocolInfo& resolved) const {
  Result<Policy> p = PolicyFromFlags(resolved.name, resolved.algorithm, policy, defaults);
  if (!p.ok()) return p.status();
  if (!resolved.window_offset.empty()) {
    if (policy.window_offset) {
      return absl::InvalidArgumentError(
          "--window-offset: the spec gives the window offset (window_offset: " +
          resolved.window_offset + "); give it in one place");
    }
    p = WithWindowOffset(*std::move(p), resolved.window_offset);
    if (!p.ok()) {
      return absl::InvalidArgumentError("the spec's window_offset: " +
                                        std::string(p.status().message()));
    }
  }
  if (Status s = resolved.Suits(*p); !s.ok()) return s;
  return p;
}

std::string LimiterFlags::Flags() const {
  return (script.given() ? script.Flags() : " " + protocol) + policy.Flags();
}

}  // namespace ratelab
