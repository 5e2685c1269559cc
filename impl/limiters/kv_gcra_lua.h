// kv-gcra-lua: GCRA in one Lua script on a Kv store (best practice). One key per limiter key
// holding the theoretical arrival time; the whole decision is one atomic script, so concurrent
// requests cannot race. The key expires once the bucket is full again plus a pad (one tolerance,
// at least kTransitAllowance): its TTL runs on the store's clock, the decision on the client's,
// and a request delayed in transit past an unpadded expiry found a fresh bucket (the harness
// found that: `ratelab check kv-gcra-lua --burst 1 --rate 2 --seed 17`, before the pad).
//
// Times travel to the script in whole microseconds (Lua numbers are doubles, exact below 2^53),
// so the policy's interval must be a whole number of microseconds and `now` is floored to one.
#ifndef RATELAB_IMPL_LIMITERS_KV_GCRA_LUA_H_
#define RATELAB_IMPL_LIMITERS_KV_GCRA_LUA_H_

#include "impl/limiters/kv_steps.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

class KvGcraLua final : public KvProtocol {
 public:
  // Requires a GCRA policy whose interval is a whole number of microseconds.
  KvGcraLua(Kv& kv, const Policy& policy);

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;

  static const KvScript& Script();

 private:
  int64_t pad_ms_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_GCRA_LUA_H_
