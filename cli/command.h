// A `ratelab` subcommand. Add declares it and its options on the app, each option parsed into a
// typed value as it is read (cli/options.h); Run does the work. An error Run returns is printed
// as "ratelab NAME: message" and exits 2, in one place (RunRatelab).
#ifndef RATELAB_CLI_COMMAND_H_
#define RATELAB_CLI_COMMAND_H_

#include <memory>
#include <ostream>

#include "impl/core/status.h"

namespace CLI {
class App;
}

namespace ratelab {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand, with its options, to `app`.
  virtual CLI::App* Add(CLI::App& app) = 0;
  // The exit status (cli/exit_codes.h), or the error that makes it 2.
  virtual Result<int> Run(std::ostream& out, std::ostream& err) = 0;
};

// The commands, each in its own file, in the order `ratelab --help` lists them.
std::unique_ptr<Command> ListCommand();     // catalogue.cc
std::unique_ptr<Command> DemoCommand();     // report_commands.cc
std::unique_ptr<Command> CompareCommand();  // report_commands.cc
std::unique_ptr<Command> CheckCommand();    // check_command.cc
std::unique_ptr<Command> WorstCommand();    // worst_command.cc
std::unique_ptr<Command> ReportCommand();   // report_commands.cc
std::unique_ptr<Command> RunCommand();      // run_command.cc
std::unique_ptr<Command> MergeCommand();    // merge_command.cc
std::unique_ptr<Command> StressCommand();   // stress_command.cc
std::unique_ptr<Command> ProbeCommand();    // probe_command.cc
std::unique_ptr<Command> RulesCommand();    // rules_command.cc
std::unique_ptr<Command> ServeCommand();    // serve_command.cc

}  // namespace ratelab

#endif  // RATELAB_CLI_COMMAND_H_
