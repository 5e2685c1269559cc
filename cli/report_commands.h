// The commands that write reports:
//   ratelab compare SCENARIO [--seed N] [--out DIR] [--strict]
//   ratelab report RESULT.json [--out DIR]
//   ratelab demo [--seed N] [--out DIR]
// Each writes DIR/report.html, report.md, report.json, junit.xml and plots/ (see
// reports/views.h) and says where they are. Exit status: 0 written (compare --strict: 1 when a
// check is broken), 2 bad input or a file that cannot be written.
#ifndef RATELAB_CLI_REPORT_COMMANDS_H_
#define RATELAB_CLI_REPORT_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace ratelab {

inline constexpr char kDefaultReportDir[] = "ratelab-report";

struct CompareOptions {
  std::string scenario;
  std::optional<uint64_t> seed;  // default: the scenario's
  std::string out = kDefaultReportDir;
  bool strict = false;  // exit 1 when a check is broken
  std::string store;    // where the kv protocols keep their state; empty: as the scenario says
};
int CompareCommand(const CompareOptions& options, std::ostream& out, std::ostream& err);

// Rebuilds the views from a saved result: compare's report.json, or run's result.json (for a
// sweep, its first failing seed).
int ReportCommand(const std::string& file, const std::string& dir, std::ostream& out,
                  std::ostream& err);

int DemoCommand(uint64_t seed, const std::string& dir, std::ostream& out, std::ostream& err);

}  // namespace ratelab

#endif  // RATELAB_CLI_REPORT_COMMANDS_H_
