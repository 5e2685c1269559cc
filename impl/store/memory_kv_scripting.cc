// MemoryKv's scripting commands: EVAL, EVALSHA and SCRIPT LOAD / EXISTS / FLUSH.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "impl/store/lua_scripting.h"
#include "impl/store/memory_kv.h"
#include "impl/store/memory_kv_errors.h"

namespace ratelab {

KvReply MemoryKv::Eval(Args a) { return RunScript(a, false); }
KvReply MemoryKv::EvalSha(Args a) { return RunScript(a, true); }

KvReply MemoryKv::RunScript(Args a, bool by_sha) {
  const std::optional<int64_t> numkeys = ParseRedisInteger(a[2]);
  if (!numkeys) return kv_errors::NotInteger();
  if (*numkeys < 0) return KvReply::Error("ERR Number of keys can't be negative");
  if (*numkeys > static_cast<int64_t>(a.size()) - 3) {
    return KvReply::Error("ERR Number of keys can't be greater than number of args");
  }
  // Redis takes a script's SHA-1 in either case; the cache holds it in lowercase.
  std::string lowered;
  std::string_view sha = a[1];
  if (!by_sha) {
    KvReply loaded = Lua().Load(a[1]);
    if (loaded.is_error()) return loaded;
    lowered = std::move(loaded.text);
    sha = lowered;
  } else if (std::any_of(sha.begin(), sha.end(), absl::ascii_isupper)) {
    lowered = absl::AsciiStrToLower(a[1]);
    sha = lowered;
  }
  const size_t n = static_cast<size_t>(*numkeys);
  return Lua().Run(sha, a.subspan(3, n), a.subspan(3 + n));
}

KvReply MemoryKv::Script(Args a) {
  const std::string sub = absl::AsciiStrToUpper(a[1]);
  if (sub == "LOAD" && a.size() == 3) return Lua().Load(a[2]);
  if (sub == "EXISTS" && a.size() >= 3) {
    std::vector<KvReply> out;
    for (size_t i = 2; i < a.size(); ++i) {
      out.push_back(KvReply::Integer(Lua().Exists(absl::AsciiStrToLower(a[i])) ? 1 : 0));
    }
    return KvReply::Array(std::move(out));
  }
  if (sub == "FLUSH" && a.size() <= 3) {
    Lua().Flush();
    return KvReply::Ok();
  }
  return KvReply::Error("ERR unknown subcommand or wrong number of arguments for '" + a[1] +
                        "'. Try SCRIPT HELP.");
}

}  // namespace ratelab
