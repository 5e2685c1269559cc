// The error replies MemoryKv shares with Redis 7.0, word for word, so that a protocol or a
// test that reads an error text sees the same one on both; and the option reader its commands
// share.
#ifndef RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_
#define RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "impl/store/kv_reply.h"

namespace ratelab::kv_errors {

inline KvReply WrongType() {
  return KvReply::Error("WRONGTYPE Operation against a key holding the wrong kind of value");
}
inline KvReply NotInteger() {
  return KvReply::Error("ERR value is not an integer or out of range");
}
inline KvReply NotFloat() { return KvReply::Error("ERR value is not a valid float"); }
inline KvReply Overflow() { return KvReply::Error("ERR increment or decrement would overflow"); }
inline KvReply Syntax() { return KvReply::Error("ERR syntax error"); }
inline KvReply InvalidExpire(const std::string& command) {
  return KvReply::Error("ERR invalid expire time in '" + command + "' command");
}
inline KvReply Arity(const std::string& command) {
  return KvReply::Error("ERR wrong number of arguments for '" + command + "' command");
}
inline KvReply UnknownCommand(std::span<const std::string> argv) {
  std::string text = "ERR unknown command '" + argv[0] + "', with args beginning with: ";
  for (size_t i = 1; i < argv.size(); ++i) text += "'" + argv[i] + "' ";
  return KvReply::Error(text);
}

}  // namespace ratelab::kv_errors

namespace ratelab {

// Reads option words (case-insensitive) from argv[from] on while they are among `names`,
// setting flags[i] for names[i]; returns the index of the first other word (or argv.size()).
template <size_t N>
size_t ReadKvOptions(std::span<const std::string> argv, size_t from,
                     const std::array<std::string_view, N>& names, std::array<bool, N>& flags) {
  for (; from < argv.size(); ++from) {
    const std::string word = absl::AsciiStrToUpper(argv[from]);
    const auto it = std::find(names.begin(), names.end(), word);
    if (it == names.end()) return from;
    flags[static_cast<size_t>(it - names.begin())] = true;
  }
  return from;
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_
