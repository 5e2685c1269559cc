// `ratelab run SCENARIO`: simulate a scenario from one seed or a range of seeds.
#ifndef RATELAB_CLI_RUN_COMMAND_H_
#define RATELAB_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "sim/scenario_run.h"

namespace ratelab {

struct RunOptions {
  std::string scenario;
  std::optional<uint64_t> seed;  // default: the scenario's
  std::string seeds;             // "A..B": a sweep
  int jobs = 1;
  std::string out;    // write DIR/result.json
  bool json = false;  // print the JSON instead of the table
  // Where the kv protocols keep their state (sim/kv_backend.h); empty: as the scenario says.
  std::string store;
};

// Exit status: 0 no violation, 1 a violation found, 2 bad input.
int RunCommand(const RunOptions& options, std::ostream& out, std::ostream& err);

// The run in words: seed, faults, verdict table, notes, first witnesses, and `reproduce`.
void PrintComparison(const Comparison& c, const std::string& reproduce, std::ostream& out);
// "ratelab COMMAND FILE --seed SEED [--store STORE]" (without FILE or STORE when empty).
std::string ReproduceCommand(const std::string& command, const std::string& file, uint64_t seed,
                             const std::string& store = "");
// Points `scenario`'s kv protocols at `store` (unless empty); InvalidArgument if it is no store.
Status UseStore(const std::string& store, Scenario& scenario);

}  // namespace ratelab

#endif  // RATELAB_CLI_RUN_COMMAND_H_
