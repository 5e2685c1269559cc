// A reply from a Redis-semantics store (Kv), as RESP2 has it: nil, an integer, a status ("OK"),
// an error ("WRONGTYPE ..."), a bulk string, or an array of replies. An error reply is a normal
// reply (the command ran and said no); a store that cannot be reached is a non-OK Status instead.
#ifndef RATELAB_IMPL_STORE_KV_REPLY_H_
#define RATELAB_IMPL_STORE_KV_REPLY_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab {

struct KvReply {
  enum class Type { kNil, kInteger, kStatus, kError, kBulk, kArray };

  Type type = Type::kNil;
  int64_t integer = 0;
  std::string text;  // kStatus, kError, kBulk
  std::vector<KvReply> elements;

  static KvReply Nil() { return {}; }
  static KvReply Integer(int64_t v) { return {Type::kInteger, v, {}, {}}; }
  static KvReply Status(std::string s) { return {Type::kStatus, 0, std::move(s), {}}; }
  static KvReply Ok() { return Status("OK"); }
  static KvReply Error(std::string s) { return {Type::kError, 0, std::move(s), {}}; }
  static KvReply Bulk(std::string s) { return {Type::kBulk, 0, std::move(s), {}}; }
  static KvReply Array(std::vector<KvReply> e) { return {Type::kArray, 0, {}, std::move(e)}; }

  bool is_nil() const { return type == Type::kNil; }
  bool is_error() const { return type == Type::kError; }
  // The reply as an integer: an integer, or a bulk string holding one (as scripts often return
  // numbers as strings). nullopt otherwise.
  std::optional<int64_t> AsInteger() const;

  friend bool operator==(const KvReply&, const KvReply&) = default;
};

// redis-cli's rendering: (nil), (integer) 3, "text", (error) ERR ..., OK, and arrays as
// [a, b, c] on one line, for histories and test failures.
std::string ToString(const KvReply& r);
// For GoogleTest's messages: the ToString rendering.
void PrintTo(const KvReply& r, std::ostream* os);

// Strict base-10 int64 parsing as Redis does it (no spaces, no '+', no leading zeros).
std::optional<int64_t> ParseRedisInteger(std::string_view s);
// A double as Redis 7.0 writes it: a score in a reply, a Lua number passed to a command ("%.17g";
// inf and -inf by name).
std::string FormatRedisScore(double d);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_KV_REPLY_H_
