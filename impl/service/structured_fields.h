// Reading the IETF rate-limit header fields back (draft-ietf-httpapi-ratelimit-headers), by the
// grammar of Structured Field Values (RFC 8941): a List whose members are Items, each a bare
// item and its parameters. What a client (or ratelab judging a limiter over HTTP) reads:
//
//   RateLimit-Policy: "default";q=100;w=60     policies: q the quota (required), w the window
//   RateLimit: "default";r=50;t=30             now: r what remains (required), t seconds to reset
//
// Every error names what is wrong and where ("at byte 12: ..."), never a guess at the value.
#ifndef RATELAB_IMPL_SERVICE_STRUCTURED_FIELDS_H_
#define RATELAB_IMPL_SERVICE_STRUCTURED_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

// A bare item of RFC 8941. Strings and Tokens are both text, told apart by `kind`; a Decimal is
// kept as its text (the rate-limit fields have none); a Byte Sequence as its base64 text.
struct SfBareItem {
  enum class Kind { kInteger, kDecimal, kString, kToken, kByteSequence, kBoolean };
  Kind kind = Kind::kInteger;
  int64_t integer = 0;  // kInteger; kBoolean: 0 or 1
  std::string text;     // kDecimal, kString, kToken, kByteSequence
  bool operator==(const SfBareItem&) const = default;
};
// "an Integer", "a String", ...
std::string_view SfKindName(SfBareItem::Kind kind);

struct SfItem {
  SfBareItem value;
  std::vector<std::pair<std::string, SfBareItem>> parameters;  // in order; a key at most once
  // The parameter `key`, or none.
  const SfBareItem* Parameter(std::string_view key) const;
};

// An sf-list of Items (an Inner List is refused: neither field has one). Empty text is an
// empty list. InvalidArgument "at byte N: ..." for text that is not one.
Result<std::vector<SfItem>> ParseSfList(std::string_view text);

// An sf-dictionary of Items, in order (a key given again keeps its first place and takes its last
// value; a key alone is the Boolean true). InvalidArgument "at byte N: ..." as above.
Result<std::vector<std::pair<std::string, SfItem>>> ParseSfDictionary(std::string_view text);

// One policy of RateLimit-Policy.
struct RateLimitPolicyField {
  std::string name;
  int64_t quota = 0;              // q
  std::optional<int64_t> window;  // w, seconds
  bool operator==(const RateLimitPolicyField&) const = default;
};
// One member of RateLimit.
struct RateLimitField {
  std::string name;
  int64_t remaining = 0;         // r
  std::optional<int64_t> reset;  // t, seconds
  bool operator==(const RateLimitField&) const = default;
};
// The fields as the draft defines them: each member a String naming a policy, q and r required
// non-negative Integers, w a positive and t a non-negative Integer. Errors name the member and
// the parameter ("member 2 ("burst"): q: expected an Integer, found a String").
Result<std::vector<RateLimitPolicyField>> ParseRateLimitPolicy(std::string_view text);
Result<std::vector<RateLimitField>> ParseRateLimit(std::string_view text);

// Either the fields above or what earlier drafts defined, which libraries still send
// (express-rate-limit's standardHeaders 'draft-6' and 'draft-7'): a RateLimit-Policy member that
// is the quota itself, an Integer, with w ("100;w=60"), and draft 7's RateLimit, a Dictionary
// of the non-negative Integers limit, remaining and reset ("limit=100, remaining=50,
// reset=30"). A member of an earlier draft has an empty name. Text that follows neither gets
// the error of the current grammar.
Result<std::vector<RateLimitPolicyField>> ParseAnyRateLimitPolicy(std::string_view text);
Result<std::vector<RateLimitField>> ParseAnyRateLimit(std::string_view text);

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_STRUCTURED_FIELDS_H_
