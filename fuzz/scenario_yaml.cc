// Scenario YAML (sim/scenario.h): any text is read as a scenario or refused with an error, and
// what is read can be sized (CheckRunSize) without overflowing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/scenario.h"
#include "sim/scenario_run.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // A limiter process (`exec:`) is refused, never started: a fuzzer runs no commands.
  const ratelab::Result<ratelab::Scenario> scenario =
      ratelab::ParseScenario(text, "fuzz.yaml", ratelab::LimiterProcesses::kRefuse);
  if (scenario.ok()) {
    (void)ratelab::CheckRunSize(*scenario, ratelab::kDefaultMaxSimulated);
  } else if (scenario.status().message().empty()) {
    __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
