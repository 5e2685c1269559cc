// The common Redis recipes' four limiters, as those recipes write them: the JavaScript becomes
// coroutines step for step, one Step per Redis command (a pipeline's or a Promise.all's commands
// are separate steps: other clients' commands can run between them, as on a real server). Numbers
// that JavaScript keeps as doubles are doubles here too. Each is a faithful reproduction with its
// flaw:
//
//   kv-fixed-window-incr-pexpire   INCR, then PEXPIRE when the count is 1. A crash between the
//                                  two leaves a key that never expires (and nothing ever sets
//                                  its expiry again: the next INCR returns 2).
//   kv-sliding-log-zset            ZREMRANGEBYSCORE, ZADD, ZCARD, EXPIRE. Every request is
//                                  logged, denied ones included, so a client that keeps trying
//                                  stays denied: false denials. EXPIRE gets windowMs / 1000,
//                                  which Redis refuses unless the window is whole seconds.
//   kv-sliding-counter             GET previous window, INCR current (and PEXPIRE at 1). Denied
//                                  requests still count, and the weighted estimate is approximate.
//   kv-token-bucket-hgetall-hset   HGETALL, compute, HSET, EXPIRE: read and write are separate
//                                  steps, so concurrent requests both spend the same token.
//
// The recipes' functions take no cost: every request counts 1, whatever its cost.
#ifndef RATELAB_IMPL_LIMITERS_KV_REDIS_RECIPES_H_
#define RATELAB_IMPL_LIMITERS_KV_REDIS_RECIPES_H_

#include <cstdint>
#include <string>

#include "impl/limiters/kv_steps.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

class KvFixedWindowIncrPexpire final : public KvProtocol {
 public:
  KvFixedWindowIncrPexpire(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
};

class KvSlidingLogZset final : public KvProtocol {
 public:
  KvSlidingLogZset(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  void Restart() override { random_state_ = seed_; }
  void SeedProcess(uint64_t seed) override { random_state_ = seed_ = seed; }

 private:
  // Math.random() for the member's suffix: a per-process generator (splitmix64), reset by a
  // restart so runs stay deterministic.
  double MathRandom();

  uint64_t seed_ = 0x5eed002;
  uint64_t random_state_ = seed_;
};

class KvSlidingCounter final : public KvProtocol {
 public:
  KvSlidingCounter(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
};

class KvTokenBucketHgetallHset final : public KvProtocol {
 public:
  KvTokenBucketHgetallHset(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
};

// What JavaScript's String(x) writes for a double: the shortest text that reads back as x.
std::string JsNumber(double x);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_REDIS_RECIPES_H_
