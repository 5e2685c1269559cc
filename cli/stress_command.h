// `ratelab stress PROTOCOL --store URL` (or `--lua FILE --model ALGORITHM`, a user's script):
// real concurrency. T threads, each with its own
// connection and its own instance of the protocol (T limiter processes), send requests as fast as
// they are answered for a while, running the protocol's steps at once on their own thread as in
// production. Every request is recorded with the wall-clock instants it was sent and answered,
// and the algorithm's promise is judged on that history with the uncertainty it has: a decision
// took effect somewhere in [sent, answered], so only admissions that break the promise wherever
// they fell are reported (CheckPromiseOverIntervals). No false alarms; the racy protocols'
// over-admission still shows, since the racers are answered within the same few milliseconds.
//
// Not judged here: false denials and Retry-After (they need the order in which the store applied
// the steps, which real concurrency does not tell); the simulator's check does those.
//
// Exit status: 0 nothing found, 1 the promise was broken, 2 bad input or a store that failed.
#ifndef RATELAB_CLI_STRESS_COMMAND_H_
#define RATELAB_CLI_STRESS_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/policy_flags.h"
#include "cli/user_script.h"

namespace ratelab {

inline const PolicyDefaults kStressPolicyDefaults = {
    .limit = 100, .window = "1s", .rate = 100.0, .burst = 10};

struct StressOptions {
  std::string protocol;
  // A Redis URL, or redis: a private redis-server that ratelab starts for the run.
  std::string store = "redis";
  int threads = 4;
  std::string duration = "3s";
  int users = 1;  // requests go round the users' keys, so the threads contend for each
  PolicyFlags policy;
  UserScriptFlags script;  // stress your own Lua script instead of a protocol
  bool json = false;
};

int StressCommand(const StressOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ratelab

#endif  // RATELAB_CLI_STRESS_COMMAND_H_
