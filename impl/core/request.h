// One request to a limiter: who (scope type and value), what (endpoint), how much (cost) and
// when (`now`, on the clock of the node that asks).
#ifndef RATELAB_IMPL_CORE_REQUEST_H_
#define RATELAB_IMPL_CORE_REQUEST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/core/in_place_text.h"
#include "impl/core/status.h"
#include "model/time.h"

namespace ratelab {

struct Request {
  std::string scope_type;   // "user", "org", "ip", "apiKey", ...
  std::string scope_value;  // "u_42"
  std::string endpoint;     // "/api/messages"
  int64_t cost = 1;
  Instant now{};
  // LimiterKey(*this), when whoever made the request has it already (the simulator makes each of
  // a run's keys once); empty when not given. A request made from another with another scope or
  // endpoint must not carry it over.
  std::string_view limiter_key = {};
};

// InvalidArgument naming the field when the request cannot be decided: an empty scope type or
// value, a cost below 1.
Status Validate(const Request& r);

// The limiter key "scope_type:scope_value:endpoint", with each part escaped (EscapeKeyPart) so
// that distinct requests never share a key, whatever characters their parts hold.
std::string LimiterKey(const Request& r);
// The same key from its three parts.
std::string LimiterKey(std::string_view scope_type, std::string_view scope_value,
                       std::string_view endpoint);
// The same key, built in place where it fits, for a caller that needs it only while it decides
// (a limiter in process): no allocation for a key of up to 64 bytes.
class InPlaceLimiterKey {
 public:
  // The request's own limiter_key when it has one.
  explicit InPlaceLimiterKey(const Request& r);
  std::string_view view() const { return given_.empty() ? text_.view() : given_; }

 private:
  std::string_view given_;
  InPlaceText<64> text_;
};

// Percent-encodes ':', '{', '}', '%' and bytes below 0x21 or above 0x7e; leaves the rest.
// Injective, and the result holds none of ':{}' so parts cannot run into each other or into a
// cluster hash tag.
std::string EscapeKeyPart(std::string_view part);

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_REQUEST_H_
