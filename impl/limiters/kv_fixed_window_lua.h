// kv-fixed-window-lua: an aligned fixed window in one Lua script on a Kv store (best practice;
// the correct form of the common Redis recipes' INCR + PEXPIRE). One key per (limiter key, window);
// the script reads the count, admits only if the request fits, increments and sets the expiry in
// one atomic step, so a crash cannot leave a key without one and a denial consumes nothing. Still a
// fixed window: up to 2N across a window edge.
#ifndef RATELAB_IMPL_LIMITERS_KV_FIXED_WINDOW_LUA_H_
#define RATELAB_IMPL_LIMITERS_KV_FIXED_WINDOW_LUA_H_

#include <string>

#include "impl/limiters/kv_steps.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

class KvFixedWindowLua final : public KvProtocol {
 public:
  // Requires a fixed-window policy. `wait_for_replica` (kv-fixed-window-lua-wait): an admission
  // is answered only once a replica has it (WAIT 1 kWaitTimeout after the script); one that no
  // replica acknowledged in time is a store failure (Unavailable), so that a failover does not
  // lose a count the client was told it spent. (Unless the failover falls between the script and
  // the WAIT: the WAIT then goes to the promoted replica, which has not this write to wait for.)
  KvFixedWindowLua(Kv& kv, const Policy& policy, bool wait_for_replica = false)
      : KvProtocol(kv, policy), wait_for_replica_(wait_for_replica) {}

  static constexpr Duration kWaitTimeout = std::chrono::milliseconds(100);

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  // A GET of the window's key.
  Task<Result<Decision>> Peek(Context& ctx, const Request& request) override;

  static const KvScript& Script();

 private:
  // The request's window: its index, its key, and the instant it ends.
  struct Window {
    int64_t index;
    std::string key;
    Instant end;
  };
  Window WindowOf(const Request& request) const;
  // The decision on a window whose count is `count` after it (or as it stands, denied).
  Decision Decided(const Request& request, const Window& w, bool allowed, int64_t count) const;

  const bool wait_for_replica_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_KV_FIXED_WINDOW_LUA_H_
