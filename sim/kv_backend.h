// One run's kv store, as the harness sees it: the protocols' Kv, and what the checks and faults
// need besides (a restart, the keys left without expiry, the state's size, a replica). On
// MemoryKv here (OpenMemoryKv); on a real Redis in the live layer (live/server_stores.h).
#ifndef RATELAB_SIM_KV_BACKEND_H_
#define RATELAB_SIM_KV_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/kv.h"
#include "impl/store/lua_scripting.h"
#include "impl/store/memory_kv.h"

namespace ratelab {

// One run's kv store. Execute is the protocols' way in; the rest is the harness's.
class KvBackend : public Kv {
 public:
  // A store restart under the store's durability (kill -9 and start again, for a real server).
  virtual void Restart() = 0;
  // Live keys with no expiry, sorted.
  virtual std::vector<std::string> KeysWithoutExpiry() = 0;
  // Live keys and their payload, counted as MemoryKv::Usage counts them.
  virtual StateSize Usage() = 0;
  // The store's replica, for a failover: detached (it keeps what it had: replication lag), and
  // promoted in the master's place (MemoryKv::DetachReplica, FailOver). Unimplemented on a real
  // server: its replica is not modelled.
  enum class ReplicaEvent { kDetach, kFailOver };
  virtual Status OnReplica(ReplicaEvent event) {
    (void)event;
    return absl::UnimplementedError(
        "a failover needs the store MemoryKv (store memory), whose replica is modelled");
  }
  // From now on, keeps each key found expired (MemoryKv::KeepLapses); a real server keeps none.
  virtual void KeepLapses() {}
  // The keys found expired since KeepLapses, in the order found.
  virtual std::vector<KeyLapse> Lapses() { return {}; }
  // The first failure of the store itself (a server that died, a lost connection), which makes
  // the run's history worthless: OK if none. Store faults the simulation injects are not these.
  virtual Status failure() const { return absl::OkStatus(); }
};

// MemoryKv on `clock`: the store of a run on `memory`, and of any limiter that keeps no kv state;
// `lua_cache`: compiled scripts and spare Lua states shared with the stores of other runs
// (LuaCache).
std::unique_ptr<KvBackend> OpenMemoryKv(const Clock& clock, Durability durability,
                                        std::shared_ptr<LuaCache> lua_cache = nullptr);

}  // namespace ratelab

#endif  // RATELAB_SIM_KV_BACKEND_H_
