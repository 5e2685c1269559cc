// GCRA (generic cell rate algorithm): one theoretical arrival time (TAT) per key. A request of
// `cost` at `now` is admitted when max(TAT, now) + cost * T - now <= B * T, and then moves the
// TAT there. Under non-decreasing time it admits exactly what the token bucket admits.
#ifndef RATELAB_MODEL_GCRA_MODEL_H_
#define RATELAB_MODEL_GCRA_MODEL_H_

#include <cstdint>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

struct GcraModel {
  bool seen = false;
  Int128 tat = 0;  // ns since the epoch; 128 bits so forced admissions cannot overflow it

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // Becomes the state every instant from `now` on sees alike (a key idle by then is as if never
  // seen), so that the linearizability search finds more states the same.
  void Forget(const Policy& p, Instant now);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const GcraModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{.only_differences = true};
  static constexpr Zones kZones = Zones::kBucketAtGivenInstant;
  void HashInto(auto& h) const {
    h.Add(int64_t{seen});
    h.Add(tat);
  }
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_GCRA_MODEL_H_
