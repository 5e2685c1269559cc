// Token bucket refilled in whole intervals (token-bucket-intervals): B whole tokens; a request
// that finds n >= 1 full intervals T passed since the last refill adds n tokens (up to B) and
// the next refill counts from it, so the part of an interval left over is dropped. This is the
// arithmetic of a script that keeps `tokens` and `last_refill` and writes
//   local n = math.floor((now - last_refill) / interval)
//   if n > 0 then tokens = math.min(capacity, tokens + n); last_refill = now end
// It never admits more than the token bucket (B + floor(D / T) in any span D), and often less.
#ifndef RATELAB_MODEL_TOKEN_BUCKET_INTERVALS_MODEL_H_
#define RATELAB_MODEL_TOKEN_BUCKET_INTERVALS_MODEL_H_

#include <cstdint>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

struct TokenBucketIntervalsModel {
  bool seen = false;
  int64_t tokens = 0;  // below zero only after admissions forced by a history
  Instant last{};      // the last refill (or the first request)

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const TokenBucketIntervalsModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests{.only_differences = true};
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const {
    h.Add(int64_t{seen});
    h.Add(tokens);
    h.Add(last);
  }

 private:
  TokenBucketIntervalsModel At(const Policy& p, Instant now) const;
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_TOKEN_BUCKET_INTERVALS_MODEL_H_
