// `ratelab check PROTOCOL`: searches for a violation of what the protocol's algorithm promises
// (random traffic, random interleavings through the simulator's latencies and BUGGIFY, and
// faults), shrinks what it finds, and prints the minimal witness as a timeline.
//
// What is checked: the algorithm's own promise (per aligned window for the fixed window and the
// counter, any window for the log, bucket conformance for the buckets: at burst 1, "2 requests,
// 1 token: only 1 succeeds"); no false denials for the window algorithms; for protocols on a
// store, that every key they leave expires; with --claim, "no more than N in any W" as the
// seeds state it. --checks replaces that list, e.g. with survives-restart (the promise across
// node crashes and store restarts; give --durability to say what the store keeps).
//
// Exit status: 0 nothing found, 1 a violation found, 2 bad input.
#ifndef RATELAB_CLI_CHECK_COMMAND_H_
#define RATELAB_CLI_CHECK_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "cli/policy_flags.h"
#include "cli/user_script.h"

namespace ratelab {

inline const PolicyDefaults kCheckPolicyDefaults = {
    .limit = 2, .window = "10s", .rate = 1.0, .burst = 1};

struct CheckOptions {
  std::string protocol;
  PolicyFlags policy;                    // kCheckPolicyDefaults where left out
  uint64_t seeds = 200;                  // how many seeds to search
  std::optional<uint64_t> seed;          // search this seed only
  int concurrency = 3;                   // nodes sending requests at once
  std::string faults = "crash,restart";  // comma-separated: crash, restart, skew, outage
  bool claim = false;
  // Comma-separated checks to run instead of the protocol's defaults (see `ratelab list checks`).
  std::optional<std::string> checks;
  std::string durability = "always";  // the store's: none, everysec, always
  // Where the kv protocols keep their state: memory, redis (a private server ratelab starts),
  // or a Redis URL (sim/kv_backend.h).
  std::string store = "memory";
  // Bring your own Lua (cli/user_script.h); `protocol` is then empty.
  UserScriptFlags script;
  bool json = false;
};

int CheckCommand(const CheckOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ratelab

#endif  // RATELAB_CLI_CHECK_COMMAND_H_
