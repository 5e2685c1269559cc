// Runs `ratelab` in process for the CLI tests.
#ifndef RATELAB_CLI_CLI_TEST_UTIL_H_
#define RATELAB_CLI_CLI_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/ratelab_cli.h"

namespace ratelab {

struct CliOutcome {
  int exit;
  std::string out;
  std::string err;
};

inline CliOutcome Ratelab(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int exit = RunRatelab(args, out, err);
  return {exit, out.str(), err.str()};
}

// The path of scenarios/NAME.yaml in the source tree.
inline std::string ExampleScenario(const std::string& name) {
  return std::string(RATELAB_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
}

}  // namespace ratelab

#endif  // RATELAB_CLI_CLI_TEST_UTIL_H_
