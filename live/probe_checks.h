// The checks a probe makes beside the promise and linearizability: the denials no order explains
// on their own, and what only HTTP shows; one table of them.
#ifndef RATELAB_LIVE_PROBE_CHECKS_H_
#define RATELAB_LIVE_PROBE_CHECKS_H_

#include <string_view>

namespace ratelab {

// The checks beside the promise and linearizability.
enum class ProbeCheck {
  kFalseDenials,  // a denial the model had room for wherever it fell (as stress judges it)
  kServerErrors,
  kRetryAfterMissing,
  kRetryAfterTooLong,
  kHeaderSyntax,
  kRemainingAboveModel,
  kResetInThePast,
  kResetBeyondModel,
  kRemainingRose,
  kRetryAfterDishonest,
  kUnreadableAnswers,
};
struct ProbeCheckInfo {
  ProbeCheck id;
  std::string_view name;
  // An optional check: what the standards leave to the server (a MAY), so what it sees is a note
  // unless the user asks for it by this name (--require); empty for a check always made.
  std::string_view required_as = {};
};
// Every check, in the enum's order (the order reports list them in), with its name.
inline constexpr ProbeCheckInfo kProbeChecks[] = {
    {ProbeCheck::kFalseDenials, "false-denials"},
    {ProbeCheck::kServerErrors, "server-errors"},
    // RFC 6585: a 429 MAY include Retry-After.
    {ProbeCheck::kRetryAfterMissing, "retry-after-missing", "retry-after"},
    {ProbeCheck::kRetryAfterTooLong, "retry-after-too-long"},
    {ProbeCheck::kHeaderSyntax, "header-syntax"},
    {ProbeCheck::kRemainingAboveModel, "remaining-above-model"},
    {ProbeCheck::kResetInThePast, "reset-in-the-past"},
    {ProbeCheck::kResetBeyondModel, "reset-beyond-model"},
    {ProbeCheck::kRemainingRose, "remaining-rose"},
    {ProbeCheck::kRetryAfterDishonest, "retry-after-dishonest"},
    // An answer past probe's bounds (1 MiB of body, 64 KiB of header) or not HTTP/1.1.
    {ProbeCheck::kUnreadableAnswers, "unreadable-answers"},
};
std::string_view ProbeCheckName(ProbeCheck check);

}  // namespace ratelab

#endif  // RATELAB_LIVE_PROBE_CHECKS_H_
