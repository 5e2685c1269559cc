// The `ratelab` command line, as a function so tests can run it without a process. The commands
// are a table (cli/command.h); exit codes are in cli/exit_codes.h.
#ifndef RATELAB_CLI_RATELAB_CLI_H_
#define RATELAB_CLI_RATELAB_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace ratelab {

// Runs `ratelab` with `args` (without the program name), writing to `out` and `err`.
int RunRatelab(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ratelab

#endif  // RATELAB_CLI_RATELAB_CLI_H_
