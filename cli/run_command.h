// `ratelab run SCENARIO`: simulate a scenario from one seed, or sweep a range of seeds
// (sim/sweep.h), and print the verdicts.
//
// Exit status: 0 no violation, 1 a violation found, 2 bad input.
#ifndef RATELAB_CLI_RUN_COMMAND_H_
#define RATELAB_CLI_RUN_COMMAND_H_

#include <cstdint>
#include <optional>
#include <string>

#include "cli/command.h"
#include "sim/kv_backend.h"
#include "sim/scenario.h"

namespace ratelab {

// "ratelab COMMAND FILE --seed SEED [--store STORE]" (without FILE or STORE when empty).
std::string ReproduceCommand(const std::string& command, const std::string& file, uint64_t seed,
                             const std::optional<StoreName>& store = std::nullopt);
// The same with `seed` as text (a sweep's kSeedPlaceholder).
std::string ReproduceCommand(const std::string& command, const std::string& file,
                             const std::string& seed, const std::optional<StoreName>& store);

// The scenario at `path`, its kv protocols pointed at `store` when given.
Result<Scenario> LoadScenarioOn(const std::string& path, const std::optional<StoreName>& store);

}  // namespace ratelab

#endif  // RATELAB_CLI_RUN_COMMAND_H_
