// What is checked: one id per check, from the code that judges it to the report that shows it,
// and one table of their names. A violation carries the id of what it breaks; a report, the id of
// the check that found it. The names (the table below) are for the edges only: JSON, text, a
// scenario's checks, a flag's.
#ifndef RATELAB_MODEL_CHECK_ID_H_
#define RATELAB_MODEL_CHECK_ID_H_

#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ratelab {

enum class CheckId {
  // A scenario's checks (judge/checks.h) come first, in the order `ratelab list checks` shows
  // them: the limiter's own algorithm's promise (one of the caps or conformance below, by its
  // algorithm), the oracles over a history (judge/oracles.h), and what a simulated run leaves
  // and does.
  kPromise,
  kAlignedWindowCap,
  kAnchoredWindowCap,
  kAnyWindowCap,
  kBucketConformance,
  kFalseDenials,
  kRetryAfter,
  kKeyExpiry,
  kSurvivesRestart,
  // Oracles the promise is one of, or that every run reports.
  kAnchoredGridCap,
  kBoundaryBurst,
  // Judged over [sent, answered] intervals by the linearizability search (judge/linearizability.h).
  kLinearizable,
  // The worst-case search's measures (sim/worst.h), shown as the witness of a measure.
  kMostInWindow,
  kOverBucket,
  kFalseDenialStreak,
  // What only HTTP shows (live/probe_checks.h).
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

// What a check judges.
enum class JudgedOn {
  kHistory,          // the answers of a run: a simulated one's, or a live one's over its intervals
  kSimulatedRun,     // what a simulated run leaves in its stores and does to them
  kLinearizability,  // whether some order of a live run's calls gives the answers they got
  kWorstCase,        // a measure the worst-case search pushes as high as it can
  kHttpExchanges,    // the HTTP a probe sent and got back
};

struct CheckIdInfo {
  CheckId id;
  std::string_view name;
  std::string_view summary;
  JudgedOn judges;
};
// Every check, in the enum's order.
inline constexpr CheckIdInfo kCheckIds[] = {
    {CheckId::kPromise, "promise",
     "what the limiter's own algorithm promises (its window cap, or conformance)",
     JudgedOn::kHistory},
    {CheckId::kAlignedWindowCap, "aligned-window-cap",
     "at most N admitted per key in each aligned window", JudgedOn::kHistory},
    {CheckId::kAnchoredWindowCap, "anchored-window-cap",
     "at most N admitted per key in each window of W opened by the first admission after the "
     "last window",
     JudgedOn::kHistory},
    {CheckId::kAnyWindowCap, "any-window-cap",
     "at most N admitted per key in any span of length W (sliding, exact)", JudgedOn::kHistory},
    {CheckId::kBucketConformance, "bucket-conformance",
     "at most B + floor(D / T) admitted per key in any span of length D", JudgedOn::kHistory},
    {CheckId::kFalseDenials, "false-denials", "no denial where the exact reference model had room",
     JudgedOn::kHistory},
    {CheckId::kRetryAfter, "retry-after",
     "Retry-After equals the model's exact wait: retrying then succeeds, one tick earlier does "
     "not",
     JudgedOn::kHistory},
    {CheckId::kKeyExpiry, "key-expiry",
     "every key or document a protocol leaves in its store expires", JudgedOn::kSimulatedRun},
    {CheckId::kSurvivesRestart, "survives-restart",
     "the promise holds across node restarts and store restarts: no window or bucket is reset by "
     "one",
     JudgedOn::kSimulatedRun},
    {CheckId::kAnchoredGridCap, "anchored-grid-cap",
     "at most N admitted per key in each window of W of its own grid: windows following on from "
     "its first admission, started afresh after a whole empty window",
     JudgedOn::kHistory},
    {CheckId::kBoundaryBurst, "boundary-burst",
     "most admitted in any span W, over N: 1 for exact limiters, up to 2 for fixed windows",
     JudgedOn::kHistory},
    {CheckId::kLinearizable, "linearizable",
     "some order of the calls, each taking effect inside its [sent, answered] interval, gives "
     "the answers they got",
     JudgedOn::kLinearizability},
    {CheckId::kMostInWindow, "most-in-window", "the most one key admitted in any span of W",
     JudgedOn::kWorstCase},
    {CheckId::kOverBucket, "over-bucket", "the most one key admitted beyond B + floor(span / T)",
     JudgedOn::kWorstCase},
    {CheckId::kFalseDenialStreak, "false-denial-streak",
     "the longest run of one key's denials the model had room for", JudgedOn::kWorstCase},
    {CheckId::kServerErrors, "server-errors", "an answer of 5xx: a limiter that fails under load",
     JudgedOn::kHttpExchanges},
    {CheckId::kRetryAfterMissing, "retry-after-missing", "a 429 without Retry-After",
     JudgedOn::kHttpExchanges},
    {CheckId::kRetryAfterTooLong, "retry-after-too-long",
     "a Retry-After longer than the model ever waits", JudgedOn::kHttpExchanges},
    {CheckId::kHeaderSyntax, "header-syntax",
     "a rate-limit header (X-RateLimit-*, RateLimit, RateLimit-Policy, Retry-After) that breaks "
     "its grammar",
     JudgedOn::kHttpExchanges},
    {CheckId::kRemainingAboveModel, "remaining-above-model",
     "a remaining count above what the model's limit leaves", JudgedOn::kHttpExchanges},
    {CheckId::kResetInThePast, "reset-in-the-past", "a reset before the request was sent",
     JudgedOn::kHttpExchanges},
    {CheckId::kResetBeyondModel, "reset-beyond-model",
     "a reset further ahead than the model takes to be whole again", JudgedOn::kHttpExchanges},
    {CheckId::kRemainingRose, "remaining-rose",
     "a remaining count that rose before the reset an earlier answer named",
     JudgedOn::kHttpExchanges},
    {CheckId::kRetryAfterDishonest, "retry-after-dishonest",
     "a retry at Retry-After's instant denied again, or one before it admitted",
     JudgedOn::kHttpExchanges},
    {CheckId::kUnreadableAnswers, "unreadable-answers",
     "an answer past the probe's bounds (1 MiB of body, 64 KiB of header) or not HTTP/1.1",
     JudgedOn::kHttpExchanges},
};
static_assert(
    [] {
      for (size_t i = 0; i < std::size(kCheckIds); ++i) {
        if (static_cast<size_t>(kCheckIds[i].id) != i) return false;
      }
      return true;
    }(),
    "Describe reads the table by position");

constexpr std::span<const CheckIdInfo> CheckIds() { return kCheckIds; }
constexpr const CheckIdInfo& Describe(CheckId check) {
  return kCheckIds[static_cast<size_t>(check)];
}
constexpr std::string_view CheckName(CheckId check) { return Describe(check).name; }
// The check named `name`, or nullopt.
std::optional<CheckId> CheckNamed(std::string_view name);
// The check named `name` if it is one of `among`, or nullopt.
std::optional<CheckId> CheckNamed(std::string_view name, std::span<const CheckId> among);
// The names of `checks`, for an error: "a, b or c".
std::string CheckChoices(std::span<const CheckId> checks);

}  // namespace ratelab

#endif  // RATELAB_MODEL_CHECK_ID_H_
