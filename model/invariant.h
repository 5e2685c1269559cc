// What a violation breaks: one id per invariant, from the oracle that finds it to the report that
// shows it. Its name (the table below) is for the edges only: JSON, text, and a scenario's or a
// flag's checks.
#ifndef RATELAB_MODEL_INVARIANT_H_
#define RATELAB_MODEL_INVARIANT_H_

#include <cstddef>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>

namespace ratelab {

enum class Invariant {
  // The oracles (model/oracles.h), over a history alone.
  kAlignedWindowCap,
  kAnchoredWindowCap,
  kAnchoredGridCap,
  kAnyWindowCap,
  kBoundaryBurst,
  kBucketConformance,
  kFalseDenials,
  kRetryAfter,
  // Judged from what a run leaves and does (judge/checks.h).
  kKeyExpiry,
  kSurvivesRestart,
  // Judged over [sent, answered] intervals by the linearizability search (model/linearizability.h).
  kLinearizable,
  // The worst-case search's measures (sim/worst.h), shown as the witness of a measure.
  kMostInWindow,
  kOverBucket,
};

struct InvariantInfo {
  Invariant id;
  std::string_view name;
  std::string_view summary;
};
// Every invariant, in the enum's order.
inline constexpr InvariantInfo kInvariants[] = {
    {Invariant::kAlignedWindowCap, "aligned-window-cap",
     "at most N admitted per key in each aligned window"},
    {Invariant::kAnchoredWindowCap, "anchored-window-cap",
     "at most N admitted per key in each window of W opened by the first admission after the "
     "last window"},
    {Invariant::kAnchoredGridCap, "anchored-grid-cap",
     "at most N admitted per key in each window of W of its own grid: windows following on from "
     "its first admission, started afresh after a whole empty window"},
    {Invariant::kAnyWindowCap, "any-window-cap",
     "at most N admitted per key in any span of length W (sliding, exact)"},
    {Invariant::kBoundaryBurst, "boundary-burst",
     "most admitted in any span W, over N: 1 for exact limiters, up to 2 for fixed windows"},
    {Invariant::kBucketConformance, "bucket-conformance",
     "at most B + floor(D / T) admitted per key in any span of length D"},
    {Invariant::kFalseDenials, "false-denials",
     "no denial where the exact reference model had room"},
    {Invariant::kRetryAfter, "retry-after",
     "Retry-After equals the model's exact wait: retrying then succeeds, one tick earlier does "
     "not"},
    {Invariant::kKeyExpiry, "key-expiry",
     "every key or document a protocol leaves in its store expires"},
    {Invariant::kSurvivesRestart, "survives-restart",
     "the promise holds across node restarts and store restarts: no window or bucket is reset by "
     "one"},
    {Invariant::kLinearizable, "linearizable",
     "some order of the calls, each taking effect inside its [sent, answered] interval, gives "
     "the answers they got"},
    {Invariant::kMostInWindow, "most-in-window", "the most one key admitted in any span of W"},
    {Invariant::kOverBucket, "over-bucket", "the most one key admitted beyond B + floor(span / T)"},
};
static_assert(
    [] {
      for (size_t i = 0; i < std::size(kInvariants); ++i) {
        if (static_cast<size_t>(kInvariants[i].id) != i) return false;
      }
      return true;
    }(),
    "Describe reads the table by position");

constexpr std::span<const InvariantInfo> Invariants() { return kInvariants; }
constexpr const InvariantInfo& Describe(Invariant invariant) {
  return kInvariants[static_cast<size_t>(invariant)];
}
constexpr std::string_view InvariantName(Invariant invariant) { return Describe(invariant).name; }
// The invariant named `name`, or nullopt.
std::optional<Invariant> InvariantNamed(std::string_view name);

}  // namespace ratelab

#endif  // RATELAB_MODEL_INVARIANT_H_
