// Anchored window (the check-then-consume helper's window "from the first request"): a window of W
// opens at a request that finds none open and holds at most N units. It stays open through start +
// W inclusive (a request at exactly start + W still falls in it, as the check-then-consume helper's
// `timestamp < now - window` has it); the first admitted request after that opens the next one.
// Windows are not aligned to the clock, and up to 2N fit across the edge between two of them. The
// half-open convention (anchored-window-half-open) ends the window before start + W: a request then
// opens the next one (Policy::AnchoredReach).
#ifndef RATELAB_MODEL_ANCHORED_WINDOW_MODEL_H_
#define RATELAB_MODEL_ANCHORED_WINDOW_MODEL_H_

#include <cstdint>
#include <optional>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

struct AnchoredWindowModel {
  std::optional<Instant> start;  // empty: no window ever opened
  int64_t count = 0;

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // Becomes the state every instant from `now` on sees alike (a window closed by then is none),
  // so that the linearizability search finds more states the same.
  void Forget(const Policy& p, Instant now);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const AnchoredWindowModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{.only_differences = true, .one_window = true};
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const {
    h.Add(int64_t{start.has_value()});
    h.Add(start.value_or(Instant{}));
    h.Add(count);
  }

 private:
  // The window `now` falls in: this one, or a fresh one opening at `now`.
  AnchoredWindowModel At(const Policy& p, Instant now) const;
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_ANCHORED_WINDOW_MODEL_H_
