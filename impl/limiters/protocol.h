// A protocol: a limiter written as a short coroutine that performs a few atomic store operations
// (each a Step) and returns a Decision. The same code runs for real (InlineExecutor) and in the
// simulator. Errors from the store come back as a non-OK Result; a denial is an OK Decision.
#ifndef RATELAB_IMPL_LIMITERS_PROTOCOL_H_
#define RATELAB_IMPL_LIMITERS_PROTOCOL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "impl/core/clock.h"
#include "impl/core/request.h"
#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/core/step.h"
#include "impl/core/task.h"
#include "impl/store/docs.h"
#include "impl/store/kv.h"
#include "impl/store/sql.h"
#include "impl/store/store_name.h"
#include "model/decision.h"
#include "model/history.h"
#include "model/policy.h"

namespace ratelab {

class Protocol {
 public:
  virtual ~Protocol() = default;
  // Decides `request`. The request and the context must outlive the task.
  virtual Task<Result<Decision>> Decide(Context& ctx, const Request& request) = 0;
  // What `request` would be answered now, with nothing recorded (the hit-counter API's GET
  // /api/usage): `remaining` is what the key may still be admitted now, before the request rather
  // than after it. Unimplemented for a protocol that cannot read its state without spending.
  virtual Task<Result<Decision>> Peek(Context&, const Request&) {
    co_return absl::UnimplementedError("this limiter cannot read a count without spending one");
  }
  // Forgets the state this process holds (a restart); state in an external store is kept.
  virtual void Restart() = 0;
  // Seeds the process's own randomness (what the seeds' code draws from Math.random): each
  // limiter process draws its own sequence, from the start again after a restart.
  virtual void SeedProcess(uint64_t /*seed*/) {}
  // The state this process holds (zero for a protocol whose state is all in a store).
  virtual StateSize ProcessState() const { return {}; }
};

// The stores a protocol may run on; the ones a run does not have are null.
struct Stores {
  Kv* kv = nullptr;
  Docs* docs = nullptr;
  Sql* sql = nullptr;
  // The run's clock, for a protocol that reads the time when its step runs (a limiter process,
  // told the instant it decides at); null in real mode, where the request's `now` is the time.
  const Clock* clock = nullptr;
};

// "memory", "kv", "docs", "sql", as `ratelab list protocols` and the reports show it.
std::string_view StoreKindName(StoreKind kind);

// What a protocol is: the registry's (`ratelab list protocols`) or a user's own (a Lua script, a
// process, a limiter in this process). The thing under test, whatever command tests it, is a
// protocol, held as its entry (a user's own entry is made when it is loaded; a registry entry,
// by RegistryProtocol).
struct ProtocolInfo {
  using Make = std::function<std::unique_ptr<Protocol>(const Policy& policy, const Stores& stores)>;

  std::string name;
  StoreKind store = StoreKind::kMemory;
  std::string_view source;  // the source document it reproduces, by what it is, or "best practice"
  Algorithm algorithm = Algorithm::kFixedWindow;  // the promise it is checked against
  std::string_view summary;
  // What is wrong with `policy` (of `algorithm`) for this protocol beyond its algorithm, or OK;
  // nullptr: any valid policy suits it.
  Status (*check)(const Policy& policy) = nullptr;
  // Makes an instance for a policy that passed `check`, on stores that include its `store`: the
  // one way a protocol is made, a registry's or a user's script alike.
  Make make;
  // The finest time step the protocol sees: requests closer than this may look simultaneous to
  // it (the Lua scripts take whole microseconds). Oracles judge its history at this resolution.
  Duration time_resolution{};
  // Whose clock its decisions are made on: the oracles judge each at the instant it was made.
  DecisionClock clock = DecisionClock::kClient;
  // It waits for a replica (WAIT): only a store with one can answer it (MemoryKv models one; a
  // private or given redis-server has none).
  bool needs_replica = false;
  // Its windows' edges are whole ticks of `time_resolution` on the clock that decides (a window
  // kept as a key's time to live: the store opens it and expires it by the millisecond, and keeps
  // the key through its expiry's own millisecond), so a request on an edge's tick is judged where
  // the store put it; otherwise the edge may tie with it there (TiePolicy).
  bool edges_on_ticks = false;
  // The unit its admissions' waits come in (a script's wait_s: whole seconds, which it may round
  // up): a wait less than this longer than the model's is the model's.
  Duration wait_unit = Duration(1);
  // The tick a window's edge may tie with a request at: the resolution, or none (a nanosecond)
  // where the edges are whole ticks.
  Duration tie() const {
    return edges_on_ticks ? Duration(1) : std::max(time_resolution, Duration(1));
  }

  // A user's own protocol: held to its model whatever policy it is given.
  bool users_own = false;
  // A user's own: why it is judged at `time_resolution` ("it is sent the time as {now_ms}").
  std::string resolution_why = {};
  // It admits with a delay (a script whose reply names a wait: wait_ms, wait_us, wait_s).
  bool delays_admissions = false;
  // Where its keys' windows start, as its spec says (UserScript::window_offset); empty: as the
  // policy says.
  std::string window_offset = {};

  // A user's own that keeps its state in its own memory (a process, or a limiter in this process).
  bool IsProcess() const { return users_own && store == StoreKind::kMemory; }
  // What is wrong with `policy` for it: another algorithm than its own, or its own `check`; OK
  // for a user's own.
  Status Suits(const Policy& policy) const;
  // An instance for `policy` on `stores`: Suits's errors, and InvalidArgument when the store it
  // needs is missing.
  Result<std::unique_ptr<Protocol>> Instance(const Policy& policy, const Stores& stores) const;
};
// Every protocol ratelab implements, for `ratelab list` and for scenarios.
std::span<const ProtocolInfo> Protocols();
// The protocol named `name`, or nullptr.
const ProtocolInfo* FindProtocol(std::string_view name);
// The same as a protocol is held (not owned: the registry lives as long as the program), or null.
std::shared_ptr<const ProtocolInfo> RegistryProtocol(std::string_view name);
// InvalidArgument when the name is unknown, the policy's algorithm is not the protocol's, or the
// policy does not suit it; needs no store, so a scenario can be checked before any exists.
Status CheckProtocol(std::string_view name, const Policy& policy);
// Makes protocol `name` for `policy` on `stores`: CheckProtocol's errors, and InvalidArgument
// when the store it needs is missing.
Result<std::unique_ptr<Protocol>> MakeProtocol(std::string_view name, const Policy& policy,
                                               const Stores& stores);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_PROTOCOL_H_
