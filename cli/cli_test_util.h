// Runs `ratelab` in process for the CLI tests.
#ifndef RATELAB_CLI_CLI_TEST_UTIL_H_
#define RATELAB_CLI_CLI_TEST_UTIL_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
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

// A user's fixed window in Lua: the window's key built in the script, numbers returned as
// strings. `compare` is the test of a full window: ">=" is right, ">" admits one too many.
inline std::string FixedWindowScript(const std::string& compare) {
  return "local limit = tonumber(ARGV[1])\n"
         "local window = tonumber(ARGV[2])\n"
         "local key = KEYS[1] .. ':' .. math.floor(tonumber(ARGV[3]) / window)\n"
         "local count = tonumber(redis.call('GET', key) or '0')\n"
         "if count " +
         compare +
         " limit then return {'0', '0'} end\n"
         "redis.call('INCR', key)\n"
         "redis.call('PEXPIRE', key, 2 * window + 1000)\n"
         "return {'1', tostring(limit - count - 1)}\n";
}

}  // namespace ratelab

#endif  // RATELAB_CLI_CLI_TEST_UTIL_H_
