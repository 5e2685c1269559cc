#include "model/policy.h"

#include <algorithm>
#include <array>

#include "model/named.h"

namespace ratelab {

namespace {
// Limits above this keep every product in the models (limit * window, in ns) far from overflow
// when computed in 128 bits, and are beyond any real rate limit.
constexpr int64_t kMaxLimit = int64_t{1} << 40;
// About 146 years in nanoseconds: a larger window or interval is surely a unit mistake.
constexpr int64_t kMaxWindowNanos = int64_t{1} << 62;

constexpr std::array<AlgorithmInfo, 12> kAlgorithms = {{
    {Algorithm::kFixedWindow, "fixed-window",
     "N per aligned window of W; up to 2N across a window edge", false, false},
    {Algorithm::kSlidingLog, "sliding-log",
     "exact: at most N in any half-open span (t - W, t], one timestamp per admitted request", false,
     true},
    {Algorithm::kSlidingCounter, "sliding-counter",
     "previous window weighted by overlap plus current window; approximates the sliding log", false,
     false},
    {Algorithm::kTokenBucket, "token-bucket",
     "bucket of B tokens refilled one per T, lazily on each request", true, false},
    {Algorithm::kGcra, "gcra",
     "generic cell rate algorithm: one theoretical arrival time per key; same promise as the "
     "token bucket",
     true, false},
    {Algorithm::kAnchoredWindow, "anchored-window",
     "N per window of W that opens at the first request after the last one closed (not "
     "aligned); up to 2N across a window edge",
     false, false},
    {Algorithm::kSlidingLogClosed, "sliding-log-closed",
     "exact sliding log whose window includes its far edge: at most N in any closed span "
     "[t - W, t], so an entry counts until W after it, inclusive",
     false, true},
    {Algorithm::kSlidingCounterAnchored, "sliding-counter-anchored",
     "sliding counter whose windows follow on from the key's first request (not aligned); a "
     "request after a whole empty window starts them afresh",
     false, false},
    {Algorithm::kTokenBucketIntervals, "token-bucket-intervals",
     "bucket of B whole tokens, one more per full interval T since the last refill; the part of "
     "an interval left over is dropped",
     true, false},
    {Algorithm::kTokenBucketCredit, "token-bucket-credit",
     "bucket of B tokens refilled one per T that admits a request of any cost while a token is "
     "left, on credit: the tokens it lacks are owed, and the next requests wait them off (Guava's "
     "RateLimiter); with cost 1, the token bucket",
     true, false},
    {Algorithm::kAnchoredWindowHalfOpen, "anchored-window-half-open",
     "anchored window whose next window opens at start + W, not after it: a window is [start, "
     "start + W), as the fixed window of Python's limits on its in-memory store has it",
     false, false},
    {Algorithm::kSlidingCounterAnchoredFloored, "sliding-counter-anchored-floored",
     "sliding-counter-anchored whose weighted count of the previous window is rounded down before "
     "it is compared (Symfony's sliding window): up to one more than the exact counter admits",
     false, false},
}};
}  // namespace

std::span<const AlgorithmInfo> Algorithms() { return kAlgorithms; }

std::string AlgorithmChoices() { return NameChoices(Algorithms()); }

const AlgorithmInfo& Describe(Algorithm a) { return kAlgorithms[static_cast<size_t>(a)]; }

std::string_view AlgorithmName(Algorithm a) { return Describe(a).name; }

std::optional<Algorithm> AlgorithmNamed(std::string_view name) { return Named(Algorithms(), name); }

std::optional<Duration> IntervalOfRate(double rate) {
  if (!(rate > 0) || rate > 1e6) return std::nullopt;
  const double us = 1e6 / rate;
  if (us * 1e3 > static_cast<double>(kMaxWindowNanos)) return std::nullopt;
  return std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(us + 0.5)));
}

std::optional<std::string> Policy::Problem() const {
  const bool bucket = IsBucket();
  const char* limit_name = bucket ? "burst" : "limit";
  const char* window_name = bucket ? "interval" : "window";
  if (limit < 1 || limit > kMaxLimit) {
    return std::string(limit_name) + " must be between 1 and " + std::to_string(kMaxLimit) +
           " (got " + std::to_string(limit) + ")";
  }
  if (window.count() < 1 || window.count() > kMaxWindowNanos) {
    return std::string(window_name) + " must be positive and under 146 years (got " +
           FormatDuration(window) + ")";
  }
  // The bucket models keep the fill level in nanoseconds (tokens * T): bound it.
  if (bucket && static_cast<Int128>(limit) * window.count() > kMaxWindowNanos) {
    return "burst * interval must be under 146 years (a bucket that never refills; got burst " +
           std::to_string(limit) + " and interval " + FormatDuration(window) + ")";
  }
  if (offset && !Aligned()) {
    return "a window offset (" + offset.text +
           ") shifts aligned windows: fixed-window's and sliding-counter's, not " +
           std::string(AlgorithmName(algorithm)) + "'s";
  }
  return std::nullopt;
}

std::string Policy::ToString() const {
  const std::string name(AlgorithmName(algorithm));
  if (IsBucket()) {
    return name + " burst " + std::to_string(limit) + ", one per " + FormatDuration(window);
  }
  return name + " " + std::to_string(limit) + " per " + FormatDuration(window) +
         (offset ? ", each key's windows from " + offset.text : "");
}

}  // namespace ratelab
