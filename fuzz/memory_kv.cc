// MemoryKv (impl/store/memory_kv.h) on any sequence of commands: each command line is an argument
// vector split on spaces, where %XX is the byte with that hex code (so an argument may hold a
// space, a newline or a script: EVAL return%20redis.call('INCR',KEYS[1]) 1 k). Every command gets
// a reply, never a crash; MemoryKv is always reachable.
#include "impl/store/memory_kv.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/store_script.h"

namespace {

// A hundredth of the usual budget: an endless loop ends in milliseconds, not a second.
constexpr int64_t kScriptBudget = 1'000'000;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Unescape(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '%' && i + 2 < token.size() && HexDigit(token[i + 1]) >= 0 &&
        HexDigit(token[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(token[i + 1]) * 16 + HexDigit(token[i + 2]));
      i += 2;
    } else {
      out += token[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ratelab::fuzz::RunStoreScript(
      data, size,
      [](const ratelab::Clock& clock, ratelab::Durability durability) {
        return std::make_unique<ratelab::MemoryKv>(clock, durability, kScriptBudget);
      },
      [](ratelab::MemoryKv& kv, std::string_view line) {
        std::vector<std::string> argv;
        for (std::string_view token : ratelab::fuzz::Split(line, ' ')) {
          if (!token.empty()) argv.push_back(Unescape(token));
        }
        if (argv.empty()) return;
        if (!kv.Execute(argv).ok()) __builtin_trap();
      });
  return 0;
}
