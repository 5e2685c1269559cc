// The error replies MemoryKv shares with Redis 7.0, word for word, so that a protocol or a
// test that reads an error text sees the same one on both.
#ifndef RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_
#define RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_

#include <span>
#include <string>

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

#endif  // RATELAB_IMPL_STORE_MEMORY_KV_ERRORS_H_
