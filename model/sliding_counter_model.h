// Sliding window counter: the previous aligned window's count weighted by how much of it still
// overlaps (now - W, now], plus the current window's count. Admits when
//   previous * (W - elapsed) / W + current + cost <= N,
// evaluated exactly as previous * (W - elapsed) + (current + cost) * W <= N * W.
// Only admitted units are counted (the common Redis recipes' version also counts denials; that is a
// protocol of its own, not this model). The anchored convention (sliding-counter-anchored) lays its
// windows from the key's first request instead of the epoch, [origin + kW, origin + (k+1)W); a
// request that finds a whole window empty behind the current one starts them afresh at its own
// instant, as a script whose state lapses (a key's time to live of 2W) does. The floored convention
// (sliding-counter-anchored-floored, Symfony's sliding window) rounds the previous window's
// weighted count down before it is compared: admits when
//   floor(previous * (W - elapsed) / W) + current + cost <= N,
// which is the exact comparison with W - 1 to spare (scaled by W).
#ifndef RATELAB_MODEL_SLIDING_COUNTER_MODEL_H_
#define RATELAB_MODEL_SLIDING_COUNTER_MODEL_H_

#include <cstdint>
#include <limits>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

struct SlidingCounterModel {
  int64_t window_index = std::numeric_limits<int64_t>::min();  // min: never seen
  int64_t previous = 0;
  int64_t current = 0;
  Instant origin{};  // where window 0 starts: the epoch, or the anchored convention's first hit

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const SlidingCounterModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{};
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const {
    h.Add(window_index);
    h.Add(previous);
    h.Add(current);
    h.Add(origin);
  }

 private:
  SlidingCounterModel At(const Policy& p, Instant now) const;
  Instant Start(const Policy& p) const { return origin + window_index * p.window; }
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_SLIDING_COUNTER_MODEL_H_
