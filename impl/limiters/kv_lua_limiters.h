// Two limiters, each one Lua script on a Kv store (atomic: one Step per decision):
//
//   kv-token-bucket-lua  the limit service's bucket, as its five steps say: read tokens and
//   last_refill
//                        from a hash, refill by elapsed * rate (capped at the capacity), take a
//                        token if one is whole, write both fields back, TTL twice the window
//                        (the time a bucket takes to fill). Times in milliseconds, tokens a
//                        double. As written, elapsed is not clamped at zero: a node whose clock
//                        is behind the last writer's takes tokens away, and the cap then keeps
//                        them from coming back in full.
//   kv-sliding-log-lua   the correct form of the common Redis recipes' sliding log: trims, counts,
//   and logs
//                        the request only when it is admitted, with members made unique by a
//                        counter, and an exact Retry-After (when the oldest entry that must go
//                        leaves the window). Its keys live a window past the last entry,
//                        plus a pad (kTransitAllowance), so a request delayed in transit still
//                        finds them. The limit service's TTL has no such pad: with a fill time
//                        shorter than a request's transit, a late request finds a fresh bucket.
#ifndef RATELAB_IMPL_LIMITERS_KV_LUA_LIMITERS_H_
#define RATELAB_IMPL_LIMITERS_KV_LUA_LIMITERS_H_

#include "impl/limiters/kv_steps.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

class KvTokenBucketLua final : public KvProtocol {
 public:
  KvTokenBucketLua(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  static const KvScript& Script();
};

class KvSlidingLogLua final : public KvProtocol {
 public:
  KvSlidingLogLua(Kv& kv, const Policy& policy) : KvProtocol(kv, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  static const KvScript& Script();
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_LUA_LIMITERS_H_
