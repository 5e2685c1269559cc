// A request body's JSON object, read for the few string members a decision needs (the limit
// service's
// {"user_id", "endpoint", "scope"}, the hit-counter API's {"userId"}) without building a document.
//
// simdjson reads it (its parse costs a tenth of building an nlohmann document, which cost more
// than the decision); what simdjson refuses is read again by nlohmann's parser, whose verdict
// stands, so that both agree on what is JSON: a body simdjson cannot take for its own reasons
// (an integer past 64 bits, nesting past its depth) is still read.
#ifndef RATELAB_IMPL_SERVICE_JSON_BODY_H_
#define RATELAB_IMPL_SERVICE_JSON_BODY_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "impl/core/status.h"

namespace ratelab {

// The members at the top level of a JSON object, in order: each string member's value, and what
// every other member is; what nests deeper is skipped. Of two members with one name, the later
// counts, as in a parsed document (String looks from the end: a body of many members costs a
// pass a name asked for, never a pass a member).
class TopLevelMembers {
 public:
  enum class Type { kString, kNumber, kBoolean, kNull, kObject, kArray };
  struct Member {
    std::string name;
    Type type;
    std::string value;  // a string member's
    bool operator==(const Member&) const = default;
  };

  // A member of `type` (and `value`, for a string) named `name`, after those there are.
  void Add(std::string_view name, Type type, std::string_view value = {});
  // Held in place up to four (a decision's body has three: no allocation for the list).
  using Members = absl::InlinedVector<Member, 4>;
  const Members& members() const { return members_; }

  // The non-empty string member `name`, or `fallback` when it is absent and one is given;
  // InvalidArgument "NAME: missing" / "NAME: expected a string, found a number" / "NAME: empty".
  Result<std::string> String(std::string_view name,
                             std::optional<std::string_view> fallback = std::nullopt) const;

 private:
  Members members_;
};

// "a string", "a number", "a boolean", "null", "an object", "an array".
std::string_view Name(TopLevelMembers::Type type);

// Reads bodies, keeping its parser's buffers from one to the next. Not thread-safe: one per
// service (a thread's, or a simulated node's).
class JsonBodyReader {
 public:
  JsonBodyReader();
  ~JsonBodyReader();
  JsonBodyReader(JsonBodyReader&&) noexcept;
  JsonBodyReader& operator=(JsonBodyReader&&) noexcept;

  // The members of the object `body` holds; InvalidArgument "the body is not JSON; expected
  // SHAPE" or "the body is an array; expected SHAPE" otherwise. A body with room for simdjson's
  // padding past its size (kHttpBodyPadding: a server's request) is read where it is; another
  // is copied.
  Result<TopLevelMembers> Read(const std::string& body, std::string_view shape);

  // The same by nlohmann's parser alone: the verdict on what simdjson refuses, and the reference
  // Read is tested against.
  static Result<TopLevelMembers> ReadByNlohmann(std::string_view body, std::string_view shape);

 private:
  struct Parser;
  std::unique_ptr<Parser> parser_;  // made at the first Read
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_JSON_BODY_H_
