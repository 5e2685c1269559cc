#include "impl/limiters/kv_steps.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "absl/strings/ascii.h"
#include "impl/store/kv_step.h"
#include "impl/store/lua_scripting.h"

namespace ratelab {

KvScript::KvScript(std::string name_in, std::string body_in)
    : name(std::move(name_in)), body(std::move(body_in)), sha(Sha1Hex(body)) {}

namespace {

// How much of a word a step's label shows.
constexpr size_t kLongest = 48;

// Adds `word` to a step's label, cut short past kLongest characters.
void AppendWord(std::string& label, std::string_view word) {
  if (!label.empty()) label += ' ';
  label += word.substr(0, kLongest);
  if (word.size() > kLongest) label += "...";
}

// A script call's label: `verb`, the script's name (not its SHA-1 or body), then the words of
// `argv` after those two.
std::string ScriptLabel(std::string_view verb, const KvScript& script,
                        std::span<const std::string> argv) {
  size_t size = verb.size() + 1 + script.name.size() + 3;
  for (const std::string& word : argv.subspan(2)) {
    size += 1 + std::min(word.size(), kLongest + 3);  // "..." past kLongest
  }
  std::string label;
  label.reserve(size);
  AppendWord(label, verb);
  AppendWord(label, script.name);
  for (const std::string& word : argv.subspan(2)) AppendWord(label, word);
  return label;
}

}  // namespace

std::string CommandLabel(std::span<const std::string> argv) {
  std::string label;
  for (const std::string& word : argv) AppendWord(label, word);
  return label;
}

Task<Result<KvReply>> KvCommand(Context& ctx, Kv& kv, std::vector<std::string> argv) {
  // (The label made before the co_await, not by a ?: within its operand: built by GCC 12, that
  // freed an invalid pointer.)
  std::string label;
  if (ctx.labelled()) label = CommandLabel(argv);
  co_return co_await KvCommandStep(ctx, std::move(label), kv, argv);
}

std::vector<std::string> EvalArgv(const KvScript& script, size_t keys, size_t args) {
  std::vector<std::string> argv;
  argv.reserve(3 + keys + args);
  argv.emplace_back("EVALSHA");
  argv.push_back(script.sha);
  argv.push_back(std::to_string(keys));
  return argv;
}

Task<Result<KvReply>> KvEval(Context& ctx, Kv& kv, const KvScript& script,
                             std::vector<std::string> argv) {
  // The label, the script's name and its words, is made only for an executor that reads it (on a
  // real store it was an allocation and about 700 instructions a decision, a twentieth of the
  // client's), before the co_await as KvCommand's is.
  std::string label;
  if (ctx.labelled()) label = ScriptLabel("EVALSHA", script, argv);
  Result<KvReply> reply = co_await KvCommandStep(ctx, std::move(label), kv, argv);
  if (!reply.ok() || !reply->is_error() || reply->text.rfind("NOSCRIPT", 0) != 0) co_return reply;
  argv[0] = "EVAL";
  argv[1] = script.body;
  label.clear();
  if (ctx.labelled()) label = ScriptLabel("EVAL", script, argv);
  co_return co_await KvCommandStep(ctx, std::move(label), kv, argv);
}

Decision ScriptDecision(const ReplyNumbers& reply, int64_t limit) {
  Decision d;
  d.limit = limit;
  d.allowed = reply[0] != 0;
  d.remaining = std::max<int64_t>(0, reply[1]);
  if (!d.allowed) d.retry_after = reply[2] < 0 ? kNever : std::chrono::milliseconds(reply[2]);
  return d;
}

Result<ReplyNumbers> ReplyIntegers(const Result<KvReply>& reply, size_t n,
                                   std::string_view protocol) {
  if (!reply.ok()) return reply.status();
  ReplyNumbers out;
  out.reserve(n);
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
