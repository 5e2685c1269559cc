// What only HTTP shows, read from each answer as a probe judges it: rate-limit headers that break
// their grammar or the model (a Remaining above what the limit leaves, a reset in the past or
// beyond the model, a Remaining that rises before the reset), a denial's Retry-After, 5xx
// answers; and what the headers say of the window's edge and the policy.
#ifndef RATELAB_LIVE_PROBE_FINDINGS_H_
#define RATELAB_LIVE_PROBE_FINDINGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/http_load.h"
#include "live/probe_plan.h"
#include "model/decision.h"
#include "model/policy.h"
#include "model/time.h"

namespace ratelab {

// Something only HTTP shows, with the exchanges (by number) that show it.
struct ProbeFinding {
  CheckId check = CheckId::kServerErrors;
  std::string summary;
  std::vector<int64_t> exchanges;  // at most a few
};

// A non-negative decimal integer, all of `text`.
std::optional<int64_t> WholeNumber(std::string_view text);

// The span a reset header (unix seconds, or seconds from now, rounded either way) leaves the
// window's edge in, on the probe's clock: from the first of `e`'s RateLimit t, RateLimit-Reset
// and X-RateLimit-Reset that is a whole number; nothing when none is.
std::optional<std::pair<Instant, Instant>> WindowEdgeFromHeaders(const HttpExchange& e);

// The answer a probe gives when the policy is to be learnt from headers that never state one.
inline constexpr char kNoPolicyInHeaders[] =
    "--from-headers: no answer had RateLimit-Policy, X-RateLimit-Limit or RateLimit-Limit to learn "
    "the limit from; give --limit and --window";

// The window policy of `model`'s algorithm that the first answer stating one gives: the first
// member of RateLimit-Policy (its quota, and its w or else `model`'s window when
// `window_given`); else X-RateLimit-Limit or RateLimit-Limit, with `model`'s window when
// `window_given`. FailedPrecondition (kNoPolicyInHeaders) when no answer states a limit;
// InvalidArgument naming the answer when it states a limit but no window and none was given.
Result<Policy> PolicyFromHeaders(const Policy& model, bool window_given,
                                 const std::vector<HttpExchange>& exchanges);

// Findings gathered by check as a probe reads each answer: how many exchanges show each, and
// the first few.
class ProbeFindings {
 public:
  // An exchange counts once for a check, however many of its headers show it.
  void Add(CheckId check, int64_t n, std::string example);
  // The findings, each summarised as "K of `answers` answers: " and its first example.
  std::vector<ProbeFinding> Take(int64_t answers);

 private:
  struct Entry {
    CheckId check;
    int64_t count = 0;
    int64_t last = 0;  // the exchange last added
    std::string first;
    std::vector<int64_t> exchanges;
  };
  std::map<std::string_view, Entry> entries_;  // by name: the findings in name order
};

// A decision's exchange (by index) and the Remaining its answer stated.
struct StatedRemaining {
  size_t exchange;
  int64_t remaining;
  bool admitted;
};

// What the answer's rate-limit headers say, checked against their grammar and the model: the
// Remaining it states, if any.
std::optional<int64_t> CheckStateHeaders(const ProbePlan& plan, const HttpExchange& e,
                                         Decision& decision, ProbeFindings& findings);

// A denial's Retry-After: present, whole seconds (or an HTTP-date), no longer than the model
// ever waits.
void CheckRetryAfter(const ProbePlan& plan, const HttpExchange& e, Decision& decision,
                     ProbeFindings& findings);

// Whether the model's allowance comes back whole at the window's end and never before it (so a
// Remaining may rise only at the reset the server names).
bool RisesOnlyAtTheReset(Algorithm algorithm);

// One user's Remaining is never above what the model's limit leaves after the admissions that
// surely came first (answered before the answer was sent) and surely count at its decision
// (sent after its span began, wherever each fell), and its own. `admitted`: the user's
// admissions (exchange indices), in the order they were sent.
void CheckRemainingAgainstAdmissions(const Policy& policy,
                                     const std::vector<HttpExchange>& exchanges,
                                     const std::vector<size_t>& admitted,
                                     const std::vector<StatedRemaining>& stated,
                                     ProbeFindings& findings);

// One user's Remaining never rises before the reset the server named: for each answer b, the
// answer a last settled before b was sent (a answered first, so a decided first) must state no
// less than b when b was answered before a's reset could come (at its earliest, the reset
// header rounded either way) and both state the same limit.
void CheckRemainingNeverRises(const std::vector<HttpExchange>& exchanges,
                              std::vector<StatedRemaining>& stated, ProbeFindings& findings);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_FINDINGS_H_
