// The per-key arithmetic of each in-process limiter: a `State` and a `Decide` that updates it.
// Internal to in_process_limiter.cc, which puts a State per key in a ShardedStateMap.
//
// Times are int64 nanoseconds since the epoch; every product stays below 2^62 because a Policy
// bounds burst * interval and costs above the limit are refused before any arithmetic.
//
// Each has `Idle(s, t)`: true when state `s` answers every request at `t` or later, of a cost no
// more than the limit, exactly as a key never seen would (an expired window, a full bucket), so
// that the key can be dropped without changing a decision. Once idle, a state stays idle.
#ifndef RATELAB_IMPL_LIMITERS_IN_PROCESS_ALGORITHMS_H_
#define RATELAB_IMPL_LIMITERS_IN_PROCESS_ALGORITHMS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "model/decision.h"
#include "model/policy.h"
#include "model/sliding_log_model.h"

namespace ratelab::internal {

inline constexpr int64_t kUnseen = std::numeric_limits<int64_t>::min();

class FixedWindowCounter {
 public:
  struct State {
    int64_t window_index = kUnseen;
    int64_t count = 0;
  };
  explicit FixedWindowCounter(const Policy& p) : limit_(p.limit), window_(p.window.count()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  bool Idle(const State& s, int64_t t) const { return s.window_index < FloorDiv(t, window_); }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  int64_t limit_;
  int64_t window_;
};

// The check-then-consume helper's window from the first request (see
// model/anchored_window_model.h).
class AnchoredWindow {
 public:
  struct State {
    int64_t start = kUnseen;
    int64_t count = 0;
  };
  // `window_` is the window's reach: W, or W less a nanosecond for the half-open convention.
  explicit AnchoredWindow(const Policy& p) : limit_(p.limit), window_(p.AnchoredReach().count()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  bool Idle(const State& s, int64_t t) const { return s.start == kUnseen || t > s.start + window_; }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  int64_t limit_;
  int64_t window_;
};

class SlidingLog {
 public:
  struct State {
    std::vector<std::pair<int64_t, int64_t>> entries;  // (admitted at, cost); live from `head`
    size_t head = 0;
    int64_t used = 0;        // cost of live entries
    int64_t last = kUnseen;  // latest admission
  };
  // An entry counts for `window_`: W, or W and a tick for the closed window.
  explicit SlidingLog(const Policy& p) : limit_(p.limit), window_(SlidingLogReach(p).count()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  // Every entry expired: the latest admission's too.
  bool Idle(const State& s, int64_t t) const { return s.last == kUnseen || s.last <= t - window_; }
  static int64_t ExtraBytes(const State& s) {
    return static_cast<int64_t>(s.entries.capacity() * sizeof(s.entries[0]));
  }

 private:
  int64_t limit_;
  int64_t window_;
};

// Aligned windows, or (sliding-counter-anchored) windows laid from the key's first request.
class SlidingCounter {
 public:
  struct State {
    int64_t start = kUnseen;  // where the current window starts
    int64_t previous = 0;
    int64_t current = 0;
  };
  explicit SlidingCounter(const Policy& p)
      : limit_(p.limit),
        window_(p.window.count()),
        anchored_(p.AnchoredCounter()),
        slack_(p.CounterSlack()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  // Both the current window and the one before it are past.
  bool Idle(const State& s, int64_t t) const {
    return s.start == kUnseen || t - s.start >= 2 * window_;
  }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  // `s` moved to the window holding `t`.
  State At(const State& s, int64_t t) const;

  int64_t limit_;
  int64_t window_;
  bool anchored_;
  int64_t slack_;  // Policy::CounterSlack
};

// Whole tokens, one per full interval since the last refill (token-bucket-intervals).
class TokenBucketIntervals {
 public:
  struct State {
    int64_t tokens = 0;
    int64_t last = kUnseen;  // the last refill
  };
  explicit TokenBucketIntervals(const Policy& p) : burst_(p.limit), interval_(p.window.count()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  // Refilled to the full burst by at least one whole interval (a refill restarts the interval
  // at the request, as a new key's does).
  bool Idle(const State& s, int64_t t) const {
    return s.last == kUnseen ||
           (t > s.last && (t - s.last) / interval_ >= std::max<int64_t>(1, burst_ - s.tokens));
  }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  int64_t burst_;
  int64_t interval_;
};

class TokenBucket {
 public:
  struct State {
    int64_t level = 0;  // tokens * interval
    int64_t last = kUnseen;
  };
  explicit TokenBucket(const Policy& p)
      : burst_(p.limit),
        interval_(p.window.count()),
        full_(p.limit * p.window.count()),
        credit_(CreditOf(p) == BucketCredit::kOneToken) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  // Full again.
  bool Idle(const State& s, int64_t t) const {
    return s.last == kUnseen || (t >= s.last && t - s.last >= full_ - s.level);
  }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  int64_t burst_;
  int64_t interval_;
  int64_t full_;
  bool credit_;  // one token admits any cost, the rest owed (below zero)
};

class Gcra {
 public:
  struct State {
    int64_t tat = kUnseen;  // theoretical arrival time
  };
  explicit Gcra(const Policy& p)
      : burst_(p.limit), interval_(p.window.count()), tolerance_(p.limit * p.window.count()) {}
  Decision Decide(State& s, Instant now, int64_t cost) const;
  // Its theoretical arrival time is past: the bucket is full.
  bool Idle(const State& s, int64_t t) const { return s.tat <= t; }
  static int64_t ExtraBytes(const State&) { return 0; }

 private:
  int64_t burst_;
  int64_t interval_;
  int64_t tolerance_;
};

}  // namespace ratelab::internal

#endif  // RATELAB_IMPL_LIMITERS_IN_PROCESS_ALGORITHMS_H_
