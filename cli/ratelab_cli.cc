#include "cli/ratelab_cli.h"

#include <CLI/CLI.hpp>

#include "cli/run_command.h"
#include "ratelab_version.h"
#include "reports/verdict_table.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

constexpr char kDescription[] =
    "ratelab: a deterministic simulation and verification harness for rate limiters.\n"
    "It runs real limiter implementations beside reference models on a virtual clock and\n"
    "checks what they promise (never more than N per window, bucket conformance, exact\n"
    "Retry-After, no false denials). Every run prints its seed; the same seed gives the\n"
    "same result.";

int Demo(uint64_t seed, std::ostream& out, std::ostream& err) {
  Result<Comparison> c = RunScenario(DemoScenario(), seed);
  if (!c.ok()) {
    err << "ratelab demo: " << c.status().message() << "\n";
    return kExitBadInput;
  }
  out << "ratelab demo, seed " << seed
      << ": every algorithm in process, on the same traffic, compared against the claim \""
      << c->limit << " in any " << FormatDuration(c->window) << "\"\n\ntraffic:\n";
  for (const std::string& line : c->traffic) out << "  - " << line << "\n";
  out << "\n" << RenderVerdictTable(*c) << "\n";
  const std::string witnesses = RenderWitnesses(*c);
  if (!witnesses.empty()) out << "first witness of each broken claim:\n" << witnesses << "\n";
  out << "Reading it: \"own promise\" is what the algorithm guarantees (aligned windows for the\n"
         "fixed window and the counter, any window for the log, burst plus rate for the buckets);\n"
         "the last column holds every limiter to the seeds' claim. The fixed window keeps its\n"
         "promise yet admits twice the limit across a window edge.\n\n"
      << "reproduce: ratelab demo --seed " << seed << "\n";
  return kExitOk;
}

}  // namespace

int RunRatelab(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app(kDescription, "ratelab");
  app.set_version_flag("--version", std::string("ratelab ") + RATELAB_VERSION);
  app.require_subcommand(0, 1);

  std::string section;
  CLI::App* list = app.add_subcommand(
      "list",
      "List algorithms, protocols (with the seed each reproduces), backends, traffic "
      "generators and checks");
  list->add_option("section", section, "Only this section")
      ->check(CLI::IsMember({"algorithms", "protocols", "backends", "traffic", "checks"}));

  uint64_t seed = 1;
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Compare every algorithm in process on a built-in scenario (steady traffic, a "
      "boundary attack, a burst, many users) and print the verdicts");
  demo->add_option("--seed", seed, "Seed of the run (drives the many-users traffic)")
      ->capture_default_str();

  RunOptions run_options;
  uint64_t run_seed = 0;
  CLI::App* run = app.add_subcommand(
      "run",
      "Simulate a scenario file (see docs/scenarios.md and scenarios/), check its oracles, "
      "print the verdicts; exit 1 when a check is broken");
  run->add_option("scenario", run_options.scenario, "Scenario YAML file")->required();
  CLI::Option* seed_option =
      run->add_option("--seed", run_seed, "Seed of the run (default: the scenario's)");
  run->add_option("--seeds", run_options.seeds, "A range of seeds to sweep, A..B")
      ->excludes(seed_option);
  run->add_option("--jobs", run_options.jobs, "Seeds simulated in parallel")->capture_default_str();
  run->add_option("--out", run_options.out, "Directory to write result.json into");
  run->add_flag("--json", run_options.json, "Print the result as JSON instead of a table");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // help of a subcommand
      out << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
      return kExitOk;
    }
    err << "ratelab: " << e.what() << "\nRun 'ratelab --help' for usage.\n";
    return kExitBadInput;
  }
  if (list->parsed()) {
    out << RenderCatalogue(section);
    return kExitOk;
  }
  if (demo->parsed()) return Demo(seed, out, err);
  if (run->parsed()) {
    if (seed_option->count() > 0) run_options.seed = run_seed;
    return RunCommand(run_options, out, err);
  }
  out << app.help();
  return kExitOk;
}

}  // namespace ratelab
