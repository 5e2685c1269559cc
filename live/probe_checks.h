// The checks a probe makes beside the promise and linearizability: the denials no order explains
// on their own, and what only HTTP shows; their ids and names are model/check_id.h's.
#ifndef RATELAB_LIVE_PROBE_CHECKS_H_
#define RATELAB_LIVE_PROBE_CHECKS_H_

#include <vector>

#include "model/check_id.h"

namespace ratelab {

struct ProbeCheckInfo {
  CheckId id;
  // An optional check: what the standards leave to the server (a MAY), so what it sees is a note
  // unless the user asks for it by its name (--require).
  bool optional = false;
};
// Every check beside the promise and linearizability, in the order reports list them in.
inline constexpr ProbeCheckInfo kProbeChecks[] = {
    {CheckId::kFalseDenials},  // as stress judges it: a denial the model had room for anywhere
    {CheckId::kServerErrors},
    {CheckId::kRetryAfterMissing, /*optional=*/true},  // RFC 6585: a 429 MAY include Retry-After.
    {CheckId::kRetryAfterTooLong},
    {CheckId::kHeaderSyntax},
    {CheckId::kRemainingAboveModel},
    {CheckId::kResetInThePast},
    {CheckId::kResetBeyondModel},
    {CheckId::kRemainingRose},
    {CheckId::kRetryAfterDishonest},
    {CheckId::kUnreadableAnswers},
};

// The ids of kProbeChecks, in its order: every one, or only the optional ones.
inline std::vector<CheckId> ProbeCheckIds(bool only_optional = false) {
  std::vector<CheckId> ids;
  for (const ProbeCheckInfo& row : kProbeChecks) {
    if (row.optional || !only_optional) ids.push_back(row.id);
  }
  return ids;
}

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_CHECKS_H_
