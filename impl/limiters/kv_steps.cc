#include "impl/limiters/kv_steps.h"

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

std::optional<int64_t> ArrayInteger(const KvReply& reply, size_t index) {
  if (reply.type != KvReply::Type::kArray || index >= reply.elements.size()) return std::nullopt;
  return reply.elements[index].AsInteger();
}

}  // namespace ratelab
