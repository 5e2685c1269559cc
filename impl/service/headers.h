// The headers that tell an HTTP client where it stands, on every answer the service gives:
//
//   X-RateLimit-Limit      the rule's limit (a bucket's burst)             the Redis recipes
//   X-RateLimit-Remaining  what the key could still spend now
//   X-RateLimit-Reset      when its full allowance is back: unix seconds, rounded up
//   Retry-After            on a denial: whole seconds, rounded up, so never earlier than the
//                          exact wait (omitted when no wait can admit the request)
//   RateLimit-Policy       "name";q=LIMIT;w=WINDOW (seconds, rounded up)   IETF draft-ietf-
//   RateLimit              "name";r=REMAINING;t=SECONDS-TO-RESET httpapi-ratelimit-headers
//
// `name` identifies the rule that answered (its rule_id, or the policy's name), a String of
// Structured Fields, so any text can be carried escaped.
#ifndef RATELAB_IMPL_SERVICE_HEADERS_H_
#define RATELAB_IMPL_SERVICE_HEADERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "impl/service/http.h"
#include "model/decision.h"
#include "model/policy.h"

namespace ratelab {

// Whole seconds from `now` to `t`, rounded up; 0 when `t` is not after `now`.
int64_t SecondsUntil(Instant now, Instant t);
// A wait in whole seconds, rounded up (never earlier than the exact wait).
int64_t RetryAfterSeconds(Duration wait);
// When the decision's key has its full allowance back, in unix seconds rounded up (not before
// `now`).
int64_t ResetUnixSeconds(const Decision& decision, Instant now);

// The headers above for `decision`, made by a rule of `policy` called `name`, at `now`; written
// in the memory of `room` (what it holds is dropped).
AnswerHeaders RateLimitHeaders(const Decision& decision, const Policy& policy,
                               std::string_view name, Instant now, AnswerHeaders room = {});

// Appends `text` to `out` as a Structured Fields String: quoted, with '"' and '\' escaped; bytes
// outside printable ASCII (which a String cannot hold) as '?'.
void AppendStructuredString(std::string_view text, HeaderValue& out);

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HEADERS_H_
