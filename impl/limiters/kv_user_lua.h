// A user's own Lua limiter script, run on a Kv store as one EVALSHA step per request, so that
// `ratelab check --lua FILE` can hold it to an algorithm's promise.
//
// How the script is called is given as templates (script_template.h): KEYS and ARGV are
// comma-separated lists whose items hold placeholders such as {key}, {limit}, {window_ms},
// {now_ms}, {now_s_float}, {window_index}, arithmetic such as {rate_per_s*1000}, and {{ }} for a
// literal brace. Fractional values are written as JavaScript would (shortest round-trip decimal).
//
// The reply is read by position, as the comma-separated field names say:
//   allowed (non-zero: admitted), limited (non-zero: denied), remaining, retry_after_ms,
//   retry_after_s, reset_ms, reset_s (time until the window resets), wait_ms, wait_us, wait_s
//   (an admission's delay before the client forwards it: Decision::wait), _ (ignored).
// Either allowed or limited must be named, or the decision given as an expression over the
// fields (--decide 'count <= {limit}', 'remaining >= 0', 'status == 1'; expression.h), when the
// script answers with a count or a status and its library decides outside Lua. A number may come
// back as an integer or as a string holding one; allowed, limited and remaining are whole (a
// decimal string is truncated, as Redis truncates Lua numbers), the times may be fractions ("0.401"
// seconds is 401ms); allowed and limited may also be booleans (true comes back as 1, false as nil).
// A reply that is a single value is read as a one-element array.
#ifndef RATELAB_IMPL_LIMITERS_KV_USER_LUA_H_
#define RATELAB_IMPL_LIMITERS_KV_USER_LUA_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "impl/limiters/expression.h"
#include "impl/limiters/kv_steps.h"
#include "impl/limiters/protocol.h"
#include "impl/limiters/script_template.h"
#include "model/named.h"

namespace ratelab {

// What the client does when the script answers with an error: fail (report the limiter's error,
// as ratelab does by default), or admit or deny the request, as some libraries do (fail open,
// fail closed).
enum class ScriptErrorPolicy { kFail, kAdmit, kDeny };
inline constexpr NameRow<ScriptErrorPolicy> kScriptErrorPolicies[] = {
    {ScriptErrorPolicy::kFail, "fail"},
    {ScriptErrorPolicy::kAdmit, "admit"},
    {ScriptErrorPolicy::kDeny, "deny"},
};
std::string_view ScriptErrorPolicyName(ScriptErrorPolicy policy);
// The policy named `name`, or InvalidArgument naming the three there are.
Result<ScriptErrorPolicy> ParseScriptErrorPolicy(std::string_view name);

struct UserLuaScript {
  KvScript script;
  std::vector<ScriptTemplate> keys;
  std::vector<ScriptTemplate> args;
  std::vector<std::string> reply;  // field names
  // The decision as an expression over the reply's fields (--decide 'count <= {limit}'); unset:
  // the allowed or limited field says it.
  std::optional<Expression> decide;
  ScriptErrorPolicy on_error = ScriptErrorPolicy::kFail;
  // Commands the library runs for a key before its first request (a limiter object's
  // configuration, written once), each a list of templates: run once per key by each limiter.
  std::vector<std::vector<ScriptTemplate>> setup = {};
};

// The --setup commands, each words separated by spaces, each word a template
// ("HSET rl:{{{key}}}:config rate {rate_per_s}"); InvalidArgument naming a bad one.
Result<std::vector<std::vector<ScriptTemplate>>> ParseSetup(std::span<const std::string> commands);

// Checks the templates, the field names and the decision; InvalidArgument naming what is wrong
// and where. With `decide`, a field may have any name, and the expression says admitted
// (non-zero) or denied.
Result<std::shared_ptr<const UserLuaScript>> ParseUserLua(std::string name, std::string body,
                                                          std::string_view keys,
                                                          std::string_view args,
                                                          std::string_view reply,
                                                          std::string_view decide = "");

// What a template's name stands for in `request` (`request_id` in its run) under `policy`: the
// key's text, or a number.
ScriptTemplate::Value UserScriptValue(std::string_view name, const Policy& policy,
                                      const Request& request, int64_t request_id);

// The decision the script's `reply` to `request` says, read by the reply's fields and --decide;
// InvalidArgument quoting the script's error (unless `user.on_error` admits or denies then: a
// decision with `fallback` set), or the reply when a field has no number (or a time of more than
// 95 years), or naming what --decide could not evaluate.
Result<Decision> ReadUserReply(const UserLuaScript& user, const KvReply& reply,
                               const Policy& policy, const Request& request, int64_t request_id);

class KvUserLua final : public KvProtocol {
 public:
  KvUserLua(Kv& kv, const Policy& policy, std::shared_ptr<const UserLuaScript> user)
      : KvProtocol(kv, policy), user_(std::move(user)) {}
  // A script error or a reply without the fields named comes back as InvalidArgument quoting
  // the script's own message or the reply.
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  // A new process makes its limiter objects again: every key's setup runs again.
  void Restart() override { set_up_.clear(); }

 private:
  std::shared_ptr<const UserLuaScript> user_;
  absl::flat_hash_set<std::string> set_up_;  // the keys whose setup this limiter ran
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_USER_LUA_H_
