// The protocol under test: what a checking command (check, stress, worst) or a scenario's `exec`
// is pointed at, a protocol from the registry or a user's own (a Lua script with its interface, a
// process, a limiter in this process), resolved in one place into its entry (ProtocolInfo), from
// which the simulator and the stress runner make limiters.
#ifndef RATELAB_SIM_PROTOCOL_UNDER_TEST_H_
#define RATELAB_SIM_PROTOCOL_UNDER_TEST_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/limiters/kv_user_lua.h"
#include "impl/limiters/protocol.h"
#include "judge/checks.h"
#include "model/policy.h"
#include "sim/scenario.h"

namespace ratelab {

// A user's Lua script and how it is called (impl/limiters/kv_user_lua.h): its KEYS and ARGV as
// comma-separated templates, the reply's fields by position.
struct UserScript {
  std::string path;
  Algorithm model = Algorithm::kFixedWindow;  // the algorithm it implements
  std::string keys = "rl:{key}";
  std::string args;
  std::string reply = "allowed";
  std::string decide;  // the decision as an expression over the reply; empty: allowed says it
  // Whose clock it decides on; unset: the store's when the script calls TIME or its KEYS and
  // ARGV carry no `now` (a window kept as a key's time to live), else the client's.
  std::optional<DecisionClock> clock;
  // The finest time the script sees, at which it is judged; unset: from its placeholders (1s for
  // `{now_s}`), TIME's microseconds, or for a window kept as a key's time to live the store's
  // milliseconds. 1s for a script that reads only `redis.call('TIME')[1]`.
  std::optional<Duration> resolution;
  // What its client does when it errs (--on-script-error): fail, admit or deny.
  ScriptErrorPolicy on_error = ScriptErrorPolicy::kFail;
  // Commands its library runs for a key before the key's first request (--setup), each words of
  // templates separated by spaces.
  std::vector<std::string> setup = {};
  // Where each key's aligned windows start (a spec's `window_offset`, a template over the key:
  // impl/limiters/window_offset.h); empty: at the epoch, unless the policy's flags say.
  std::string window_offset = {};
};

// "server" (the store's clock) or "client", as --clock and a spec's `clock` take it.
std::string_view ScriptClockName(DecisionClock clock);
// The clock named `name`, or InvalidArgument naming the two there are.
Result<DecisionClock> ParseScriptClock(std::string_view name);
// Whose clock a script decides on when its user does not say: the store's when it calls TIME
// or is sent no `now` (see UserScript::clock).
DecisionClock DetectScriptClock(bool calls_time, bool sends_now);

// A user's own limiter as a process (--exec), spoken to in docs/exec-protocol.md.
struct UserProcess {
  std::string command;                        // its words, as --exec takes them (no shell)
  Algorithm model = Algorithm::kFixedWindow;  // the algorithm it implements
  // The longest it may take to answer a message before the run fails.
  std::chrono::milliseconds timeout = std::chrono::seconds(10);
  // Where it runs (a scenario's limiter: the scenario file's directory); empty: ratelab's own.
  std::string directory;
};

// A user's own limiter in ratelab's own process (the C++ API, api/ratelab/check.h): one
// instance a limiter process, made again at its restart, deciding when it is called.
struct UserInProcess {
  std::string name;
  Algorithm model = Algorithm::kFixedWindow;  // the algorithm it implements
  Duration resolution = Duration(1);          // the finest time it sees
  ProtocolInfo::Make make;                    // an instance for a policy, on the run's clock
};

// What `check` holds a protocol to unless told: its promise, no false denials (every model: a
// bucket that denies what its tokens allow is as wrong as a window that does), and, on a store,
// that every key it writes expires.
std::vector<CheckId> DefaultChecks(const ProtocolInfo& protocol);
// A limiter of `protocol` with `policy`, for a scenario.
LimiterSpec LimiterOf(std::shared_ptr<const ProtocolInfo> protocol, const Policy& policy);

// `protocol` (empty: none), `script` or `process` (unset: none), exactly one of them.
// InvalidArgument saying what is wrong: more than one or none given, an unknown protocol, or a
// script that cannot be read or whose templates are wrong; FailedPrecondition for a process that
// cannot be started or greeted (it is started here, and runs while its entry is kept).
Result<std::shared_ptr<const ProtocolInfo>> ResolveProtocol(
    std::string_view protocol, const std::optional<UserScript>& script,
    const std::optional<UserProcess>& process = {});
// InvalidArgument when more than one of a protocol, a script and a process is given
// (ResolveProtocol's first check, for a caller that reads the script only after it).
Status NotBothProtocolAndScript(std::string_view protocol, bool script, bool process = false);

// A user's limiter in this process, held to its model at its resolution.
std::shared_ptr<const ProtocolInfo> InProcessProtocol(const UserInProcess& limiter);

// One request of a user's script with `policy` (the run's: a refusal quotes the reply the run
// would get) on `kv`, the store it will run on (a scratch MemoryKv, or the real server the user
// chose, emptied by the caller) at `now`, so that a script that fails there or answers in another
// shape than its interface says is reported before any search or stress. OK for a registry
// protocol.
Status TryOnce(const ProtocolInfo& protocol, Kv& kv, const Policy& policy, Instant now);
// One request of a user's process, with `policy`, at `now`: InvalidArgument when it refuses the
// policy, reported before any search; OK for anything else (a failure is the search's finding).
Status TryProcessOnce(const ProtocolInfo& protocol, const Policy& policy, Instant now);

}  // namespace ratelab

#endif  // RATELAB_SIM_PROTOCOL_UNDER_TEST_H_
