// Runs `ratelab` in process for the CLI tests.
#ifndef RATELAB_CLI_CLI_TEST_UTIL_H_
#define RATELAB_CLI_CLI_TEST_UTIL_H_

#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
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

// What a command said of one case, four ways: its exit status, the JUnit file it wrote, its
// JSON (--json) and its text (the same command without --json).
struct Said {
  int exit = 0;
  std::string junit;
  std::string json;
  std::string text;
};

// Runs `args` twice, once with --json and `--junit FILE` added, once as a user reads it, and
// gathers what each said; `before` (if any) runs before each. The two runs must exit the same.
inline Said SayBoth(const std::vector<std::string>& args, const std::string& junit,
                    const std::function<void()>& before = nullptr) {
  std::vector<std::string> with = args;
  for (const char* a : {"--json", "--junit"}) with.push_back(a);
  with.push_back(junit);
  if (before) before();
  const CliOutcome json = Ratelab(with);
  if (before) before();
  const CliOutcome text = Ratelab(args);
  std::ifstream in(junit);
  Said s{json.exit, std::string(std::istreambuf_iterator<char>(in), {}), json.out,
         text.out + text.err};
  if (text.exit != json.exit) s.exit = -1;  // the two runs disagree: fails ExpectOneAnswer
  return s;
}

// That the four say one thing: `broken` (a check broken: exit 1, a JUnit failure, "verdict":
// "violation", the text naming what broke) or kept (exit 0, no JUnit failure, "verdict": "none",
// no such word in the text).
inline void ExpectOneAnswer(const std::string& what, const Said& s, bool broken) {
  EXPECT_EQ(s.exit, broken ? kExitViolation : kExitOk) << what << "\n" << s.text;
  EXPECT_NE(s.junit.find("<testsuite"), std::string::npos) << what << ": no JUnit file";
  EXPECT_EQ(s.junit.find("<failure") != std::string::npos, broken) << what << "\n" << s.junit;
  EXPECT_EQ(s.junit.find(" failures=\"0\"") == std::string::npos, broken) << what << s.junit;
  const nlohmann::json j = nlohmann::json::parse(s.json, nullptr, false);
  EXPECT_EQ(j.is_object() ? j.value("verdict", "") : "", broken ? "violation" : "none") << what;
  const std::regex kBrokeWords(R"(\b(broke|broken|BROKEN|VIOLATION|not linearizable)\b)");
  EXPECT_EQ(std::regex_search(s.text, kBrokeWords), broken) << what << "\n" << s.text;
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
