// The `ratelab` command line, as a function so tests can run it without a process.
// Exit status: 0 success (and, for checks, nothing found), 1 a violation found, 2 bad input.
#ifndef RATELAB_CLI_RATELAB_CLI_H_
#define RATELAB_CLI_RATELAB_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace ratelab {

inline constexpr int kExitOk = 0;
inline constexpr int kExitViolation = 1;
inline constexpr int kExitBadInput = 2;

// Runs `ratelab` with `args` (without the program name), writing to `out` and `err`.
int RunRatelab(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// `ratelab list [SECTION]`: the catalogue, or one section of it. Empty on an unknown section.
std::string RenderCatalogue(const std::string& section);

}  // namespace ratelab

#endif  // RATELAB_CLI_RATELAB_CLI_H_
