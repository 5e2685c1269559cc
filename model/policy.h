// What a limiter promises: an algorithm and its parameters.
//
// Window algorithms (fixed window, sliding log, sliding window counter, anchored window) take a
// limit N and a window W: "N per W". Bucket algorithms (token bucket, GCRA) take a burst B and an
// emission interval T (one token every T, i.e. rate 1/T): "B at once, then one per T". Keeping T an
// integer number of nanoseconds makes every model exact: no floating-point drift anywhere.
#ifndef RATELAB_MODEL_POLICY_H_
#define RATELAB_MODEL_POLICY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "model/time.h"

namespace ratelab {

enum class Algorithm {
  kFixedWindow,
  kSlidingLog,
  kSlidingCounter,
  kTokenBucket,
  kGcra,
  kAnchoredWindow,
  // The conventions real limiters use beside the ones above, each judged by its own promise.
  kSlidingLogClosed,        // the log's window is closed: [now - W, now]
  kSlidingCounterAnchored,  // the counter's windows start at the key's first request
  kTokenBucketIntervals,    // whole tokens, one per full interval since the last refill
  kTokenBucketCredit,       // any cost admitted while a token is left, the rest owed
  kAnchoredWindowHalfOpen,  // the anchored window's next opens at start + W: [start, start + W)
  kSlidingCounterAnchoredFloored,  // the anchored counter's weighted count rounded down
};

struct AlgorithmInfo {
  Algorithm id;
  std::string_view name;     // as written on the command line and in scenarios
  std::string_view summary;  // one line for `ratelab list`
  bool bucket;               // takes burst + interval rather than limit + window
  bool log;                  // keeps an entry per admission in the window: state grows with N
};

// Every algorithm, in a stable order.
std::span<const AlgorithmInfo> Algorithms();
const AlgorithmInfo& Describe(Algorithm a);
std::string_view AlgorithmName(Algorithm a);
std::optional<Algorithm> AlgorithmNamed(std::string_view name);
// Every algorithm's name, for an error: "fixed-window, sliding-log, ... or token-bucket-intervals".
std::string AlgorithmChoices();

// Where one key's aligned windows start, for a limiter that spreads its keys' resets over the
// window (a common way: `offset = hash(key) % window`): that key's windows are
// [of(key) + kW, of(key) + (k+1)W). Unset: at the epoch, every key's alike.
struct WindowOffset {
  std::string
      text;  // as its user wrote it, "{key_crc32 % window_ms}ms": what names and compares it
  std::function<Duration(std::string_view key)> of;

  explicit operator bool() const { return of != nullptr; }
  bool operator==(const WindowOffset& o) const { return text == o.text; }
};

struct Policy {
  Algorithm algorithm = Algorithm::kFixedWindow;
  int64_t limit = 0;  // N, or the burst B for bucket algorithms
  Duration window{};  // W, or the emission interval T for bucket algorithms
  // The fixed window's and the sliding counter's: where each key's aligned windows start.
  WindowOffset offset = {};

  static Policy Window(Algorithm a, int64_t limit, Duration window) { return {a, limit, window}; }
  static Policy Bucket(Algorithm a, int64_t burst, Duration interval) {
    return {a, burst, interval};
  }
  bool IsBucket() const { return Describe(algorithm).bucket; }
  // Whether its sliding counter's windows follow on from the key's first request.
  bool AnchoredCounter() const {
    return algorithm == Algorithm::kSlidingCounterAnchored ||
           algorithm == Algorithm::kSlidingCounterAnchoredFloored;
  }
  // What a sliding counter's comparisons spare, scaled by W (in nanoseconds): W - 1 for the
  // floored convention, whose weighted count of the previous window is rounded down before it is
  // compared (floor(previous * (W - e) / W) + current + cost <= N is the exact comparison with
  // W - 1 to spare), else 0.
  int64_t CounterSlack() const {
    return algorithm == Algorithm::kSlidingCounterAnchoredFloored ? window.count() - 1 : 0;
  }
  // The anchored window's last instant, as an offset from its start: W for the closed convention
  // (a request at exactly start + W still falls in it), W less a nanosecond for the half-open one.
  Duration AnchoredReach() const {
    return algorithm == Algorithm::kAnchoredWindowHalfOpen ? window - Duration(1) : window;
  }
  // Whether its windows are aligned to a grid (fixed window, sliding counter), which `offset`
  // shifts per key.
  bool Aligned() const {
    return algorithm == Algorithm::kFixedWindow || algorithm == Algorithm::kSlidingCounter;
  }
  // Where `key`'s aligned windows start relative to the epoch: 0 without an offset.
  Duration OffsetOf(std::string_view key) const {
    return offset && Aligned() ? offset.of(key) : Duration(0);
  }
  // The window of the claim "limit in any window" this policy makes: W, or for a bucket the time
  // it takes to fill, B * T.
  Duration ClaimWindow() const { return IsBucket() ? limit * window : window; }
  // The longest the whole allowance can take to come back after an admission, and so the longest
  // any wait can be: the claim's window, or two windows for a sliding counter (an admission
  // weighs on the window after its own too).
  Duration LongestRestore() const {
    const bool counter = algorithm == Algorithm::kSlidingCounter ||
                         algorithm == Algorithm::kSlidingCounterAnchored ||
                         algorithm == Algorithm::kSlidingCounterAnchoredFloored;
    return counter ? 2 * window : ClaimWindow();
  }
  // The most a conforming limiter may admit in any span of length `span` (closed interval):
  // N per aligned window allows 2N across a boundary, so for window algorithms the bound is
  // stated separately by each invariant; for bucket algorithms it is B + floor(span / T).
  int64_t BucketBound(Duration span) const { return limit + span.count() / window.count(); }

  // Empty when usable; otherwise what is wrong, e.g. "limit must be at least 1 (got 0)".
  std::optional<std::string> Problem() const;
  // "fixed-window 5 per 1m", "gcra burst 10, one per 100ms", "fixed-window 5 per 1m, each key's
  // windows from {key_crc32 % window_ms}ms".
  std::string ToString() const;

  bool operator==(const Policy&) const = default;
};

// A bucket's emission interval for `rate` tokens a second, in whole microseconds (what the Lua
// protocols can express), or nullopt unless the rate is above 0, at most 1000000 a second, and
// slow by no more than an interval under 146 years (so that it is not wrapped in nanoseconds).
// The one conversion: `--rate` and the C++ API's `rate` both take it.
std::optional<Duration> IntervalOfRate(double rate);

// What a bucket needs to admit a request: its whole cost, or (token-bucket-credit) one token, the
// rest owed. The one place that says which algorithm admits on credit: its model, its in-process
// limiter and the oracles all ask here.
enum class BucketCredit { kNone, kOneToken };
inline BucketCredit CreditOf(const Policy& policy) {
  return policy.algorithm == Algorithm::kTokenBucketCredit ? BucketCredit::kOneToken
                                                           : BucketCredit::kNone;
}

}  // namespace ratelab

#endif  // RATELAB_MODEL_POLICY_H_
