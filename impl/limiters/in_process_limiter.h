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
//
// Memory: a key's state is kept until DropIdle finds it no longer matters (an expired window,
// a full bucket: dropping it changes no decision), or, with `max_keys`, until the limiter is
// full: a new key in a full shard first drops the shard's keys idle a second before that request's
// `now` (a request whose thread read the clock a moment earlier still finds its key), then
// its least recently used eighth, whose keys start afresh (so they may be admitted more than the
// policy allows: the price of a bound on memory, counted by evictions()).
#ifndef RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_
#define RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_

#include <cstddef>
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
  // Drops every key idle at `now` (one that would answer every request from `now` on, of a cost
  // no more than the limit, as a key never seen does); returns how many.
  virtual int64_t DropIdle(Instant now) = 0;
  // Keys holding state.
  virtual int64_t KeyCount() const = 0;
  // Keys dropped so far: idle (DropIdle, or to make room), and evicted while still counting
  // (the least recently used, to make room under max_keys).
  struct Evictions {
    int64_t idle = 0;
    int64_t in_use = 0;
  };
  virtual Evictions evictions() const = 0;
  // Bytes of per-key state, excluding the key itself and the hash table's slack.
  virtual int64_t StateBytes() const = 0;

  const Policy& policy() const { return policy_; }

 protected:
  explicit InProcessLimiter(const Policy& policy) : policy_(policy) {}

 private:
  Policy policy_;
};

// The limiter for `policy`, keeping at most about `max_keys` keys (0: no bound; the bound is per
// shard, max_keys / 64 rounded up, as a sharded cache's). Requires !policy.Problem().
std::unique_ptr<InProcessLimiter> MakeInProcessLimiter(const Policy& policy, size_t max_keys = 0);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_IN_PROCESS_LIMITER_H_
