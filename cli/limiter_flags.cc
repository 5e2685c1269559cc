#include "cli/limiter_flags.h"

#include <CLI/CLI.hpp>

namespace ratelab {

void LimiterFlags::Add(CLI::App& command, const std::string& protocol_help,
                       const std::string& lua_help) {
  command.add_option("protocol", protocol, protocol_help);
  AddPolicyFlags(command, policy, defaults);
  AddUserScriptFlags(command, script, lua_help);
}

Result<LimiterSubject> LimiterFlags::Subject() const {
  if (Status s = NotBothProtocolAndScript(protocol, script.lua || script.lua_spec,
                                          script.exec.has_value());
      !s.ok()) {
    return s;
  }
  Result<std::optional<UserProcess>> process = script.Process();
  if (!process.ok()) return process.status();
  Result<std::optional<UserScript>> user_script = script.Script();
  if (!user_script.ok()) return user_script.status();
  return ResolveLimiter(protocol, *user_script, *process);
}

Result<Policy> LimiterFlags::PolicyOf(const LimiterSubject& subject) const {
  Result<Policy> p = PolicyFromFlags(subject.name, subject.info->algorithm, policy, defaults);
  if (!p.ok()) return p.status();
  if (Status s = subject.CheckPolicy(*p); !s.ok()) return s;
  return p;
}

std::string LimiterFlags::Flags() const {
  return (script.given() ? script.Flags() : " " + protocol) + policy.Flags();
}

}  // namespace ratelab
