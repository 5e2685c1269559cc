// Token bucket: B tokens, one more every T, refilled lazily when a request arrives; a new key
// starts full. On credit (token-bucket-credit), a request of any cost is admitted while a token is
// left, and the level goes below zero by what it lacked. The fill level is kept in nanoseconds
// (tokens * T) so refill is exact.
#ifndef RATELAB_MODEL_TOKEN_BUCKET_MODEL_H_
#define RATELAB_MODEL_TOKEN_BUCKET_MODEL_H_

#include <cstdint>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

struct TokenBucketModel {
  bool seen = false;
  Int128 level = 0;  // tokens * T; below zero on credit, or after admissions a history forced
  Instant last{};    // when `level` was last brought up to date

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // Becomes the state every instant from `now` on sees alike (refilled up to `now`), so that
  // the linearizability search finds more states the same.
  void Forget(const Policy& p, Instant now);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const TokenBucketModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{.only_differences = true};
  static constexpr Zones kZones = Zones::kBucketAtLatestInstant;
  void HashInto(auto& h) const {
    h.Add(int64_t{seen});
    h.Add(level);
    h.Add(last);
  }

 private:
  TokenBucketModel At(const Policy& p, Instant now) const;
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_TOKEN_BUCKET_MODEL_H_
