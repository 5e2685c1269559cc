// In-process limiters: the five algorithms on process memory, the fastest way to limit when one
// process sees all the traffic.
//
// Thread-safety: Decide may be called from many threads at once; keys are spread over shards,
// each behind its own small lock, so threads contend only when they touch the same shard. The
// answers are a pure function of the sequence of calls (no clocks, no randomness), so in the
// simulator, which calls from one thread, they are deterministic.
//
// Semantics are exactly those of the reference models in model/ (the property tests compare
// them field by field): a denial changes nothing, and a `now` earlier than the key's latest
// admission is treated as the models treat it.
#ifndef RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_
#define RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "model/decision.h"
#include "model/policy.h"

namespace ratelab {

class InProcessLimiter {
 public:
  virtual ~InProcessLimiter() = default;

  // Decides `cost` units for `key` at `now` and records them when admitted. Requires cost >= 1.
  virtual Decision Decide(std::string_view key, Instant now, int64_t cost) = 0;
  // What Decide would answer, with nothing recorded and `remaining` counted before the cost
  // (Protocol::Peek).
  virtual Decision Peek(std::string_view key, Instant now, int64_t cost) = 0;
  // Forgets every key: what a process restart does to in-memory state.
  virtual void Clear() = 0;
  // Keys holding state (never evicted: stale keys cost memory until Clear).
  virtual int64_t KeyCount() const = 0;
  // Bytes of per-key state, excluding the key itself and the hash table's slack.
  virtual int64_t StateBytes() const = 0;

  const Policy& policy() const { return policy_; }

 protected:
  explicit InProcessLimiter(const Policy& policy) : policy_(policy) {}

 private:
  Policy policy_;
};

// The limiter for `policy`. Requires !policy.Problem().
std::unique_ptr<InProcessLimiter> MakeInProcessLimiter(const Policy& policy);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_
