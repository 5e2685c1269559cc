// Fixed window, aligned: at most N units per window [kW, (k+1)W) counted from the epoch.
#ifndef RATELAB_MODEL_FIXED_WINDOW_MODEL_H_
#define RATELAB_MODEL_FIXED_WINDOW_MODEL_H_

#include <cstdint>
#include <limits>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

// A window algorithm's answer for a window holding `count` of `p.limit` units, from which a
// request of `cost` at `now` would next find room at `next` (when the window ends).
Decision CountedWindowDecision(const Policy& p, int64_t count, Instant next, Instant now,
                               int64_t cost);

struct FixedWindowModel {
  int64_t window_index = std::numeric_limits<int64_t>::min();  // min: never seen
  int64_t count = 0;

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const FixedWindowModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{};
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const {
    h.Add(window_index);
    h.Add(count);
  }

 private:
  // This state moved to the window of `now` (or kept in its own if that is later).
  FixedWindowModel At(const Policy& p, Instant now) const;
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_FIXED_WINDOW_MODEL_H_
