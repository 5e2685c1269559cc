#include "impl/limiters/kv_steps.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "impl/store/lua_scripting.h"

namespace ratelab {

KvScript::KvScript(std::string name_in, std::string body_in)
    : name(std::move(name_in)), body(std::move(body_in)), sha(Sha1Hex(body)) {}

std::string CommandLabel(std::span<const std::string> argv) {
  constexpr size_t kLongest = 48;
  std::string label;
  for (const std::string& word : argv) {
    if (!label.empty()) label += ' ';
    label += word.size() <= kLongest ? word : word.substr(0, kLongest) + "...";
  }
  return label;
}

Task<Result<KvReply>> KvCommand(Context& ctx, Kv& kv, std::vector<std::string> argv) {
  co_return co_await ctx.Step(CommandLabel(argv), [&] { return kv.Execute(argv); });
}

Task<Result<KvReply>> KvEval(Context& ctx, Kv& kv, const KvScript& script,
                             std::vector<std::string> keys, std::vector<std::string> args) {
  std::vector<std::string> argv = {"EVALSHA", script.sha, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> label_words = argv;
  label_words[1] = script.name;
  Result<KvReply> reply =
      co_await ctx.Step(CommandLabel(label_words), [&] { return kv.Execute(argv); });
  if (!reply.ok() || !reply->is_error() || reply->text.rfind("NOSCRIPT", 0) != 0) co_return reply;
  argv[0] = "EVAL";
  argv[1] = script.body;
  label_words[0] = "EVAL";
  co_return co_await ctx.Step(CommandLabel(label_words), [&] { return kv.Execute(argv); });
}

Decision ScriptDecision(const std::vector<int64_t>& reply, int64_t limit) {
  Decision d;
  d.limit = limit;
  d.allowed = reply[0] != 0;
  d.remaining = std::max<int64_t>(0, reply[1]);
  if (!d.allowed) d.retry_after = reply[2] < 0 ? kNever : std::chrono::milliseconds(reply[2]);
  return d;
}

Result<std::vector<int64_t>> ReplyIntegers(const Result<KvReply>& reply, size_t n,
                                           std::string_view protocol) {
  if (!reply.ok()) return reply.status();
  std::vector<int64_t> out;
  for (size_t i = 0; i < n && reply->type == KvReply::Type::kArray && i < reply->elements.size();
       ++i) {
    const std::optional<int64_t> v = reply->elements[i].AsInteger();
    if (!v) break;
    out.push_back(*v);
  }
  if (out.size() != n) {
    return absl::InternalError(std::string(protocol) + ": unexpected reply " + ToString(*reply));
  }
  return out;
}

}  // namespace ratelab
