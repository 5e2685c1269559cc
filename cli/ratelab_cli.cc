#include "cli/ratelab_cli.h"

#include <CLI/CLI.hpp>

#include "cli/check_command.h"
#include "cli/report_commands.h"
#include "cli/run_command.h"
#include "cli/stress_command.h"
#include "cli/user_script.h"
#include "ratelab_version.h"
#include "reports/verdict_table.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

constexpr char kStoreHelp[] =
    "Where the kv protocols keep their state: memory (MemoryKv), redis (a private redis-server "
    "that ratelab starts, on virtual time), or the URL of a running Redis, redis://host:port/db "
    "or unix:///path.sock?db=N, or of a Redis Cluster, redis-cluster://host:port[,host:port...] "
    "(its database must be empty; ratelab empties it before and after each run)";

constexpr char kDescription[] =
    "ratelab: a deterministic simulation and verification harness for rate limiters.\n"
    "It runs real limiter implementations beside reference models on a virtual clock and\n"
    "checks what they promise (never more than N per window, bucket conformance, exact\n"
    "Retry-After, no false denials). Every run prints its seed; the same seed gives the\n"
    "same result.";

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
  std::string demo_out = kDefaultReportDir;
  CLI::App* demo = app.add_subcommand(
      "demo",
      "Compare every algorithm in process on a built-in scenario (steady traffic, a "
      "boundary attack, a burst, many users), print the verdicts and write a report");
  demo->add_option("--seed", seed, "Seed of the run (drives the many-users traffic)")
      ->capture_default_str();
  demo->add_option("--out", demo_out,
                   "Directory for report.html, report.md, report.json, junit.xml and plots/")
      ->capture_default_str();

  CompareOptions compare_options;
  uint64_t compare_seed = 0;
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Simulate a scenario file and write a report comparing its limiters: report.html, "
      "report.md, report.json, junit.xml and plots/ (exit 0 once written)");
  compare->add_option("scenario", compare_options.scenario, "Scenario YAML file")->required();
  CLI::Option* compare_seed_option =
      compare->add_option("--seed", compare_seed, "Seed of the run (default: the scenario's)");
  compare->add_option("--out", compare_options.out, "Directory to write the report into")
      ->capture_default_str();
  compare->add_flag("--strict", compare_options.strict, "Exit 1 when a check is broken");
  compare->add_option("--store", compare_options.store, kStoreHelp);

  CheckOptions check_options;
  uint64_t check_seed = 0;
  std::string check_checks;
  CLI::App* check = app.add_subcommand(
      "check",
      "Search for a violation of what a protocol promises (random traffic, interleavings and "
      "faults through the simulator), shrink it, and print the minimal witness; exit 1 when "
      "one is found");
  check->add_option("protocol", check_options.protocol,
                    "A protocol from ratelab list protocols (or give --lua)");
  AddPolicyFlags(*check, check_options.policy, kCheckPolicyDefaults);
  check->add_option("--seeds", check_options.seeds, "How many seeds to search")
      ->capture_default_str();
  CLI::Option* check_seed_option =
      check->add_option("--seed", check_seed, "Search this one seed (to replay a finding)");
  check->add_option("--concurrency", check_options.concurrency, "Nodes sending requests at once")
      ->capture_default_str();
  check
      ->add_option("--faults", check_options.faults,
                   "Comma-separated faults to inject: crash, restart, skew, outage, or none")
      ->capture_default_str();
  check->add_flag("--claim", check_options.claim,
                  "Also hold it to the seeds' claim: no more than N in any window W");
  CLI::Option* checks_option = check->add_option(
      "--checks", check_checks,
      "Comma-separated checks instead of the protocol's own (see ratelab list checks), e.g. "
      "survives-restart");
  check
      ->add_option("--durability", check_options.durability,
                   "What the store keeps over a restart: none, everysec, always")
      ->capture_default_str();
  check->add_option("--store", check_options.store, kStoreHelp)->capture_default_str();
  AddUserScriptFlags(*check, check_options.script,
                     "Check your own Lua script instead of a protocol (with --model)");
  check->add_flag("--json", check_options.json, "Print the verdict as JSON");

  std::string report_file, report_out = kDefaultReportDir;
  CLI::App* report = app.add_subcommand(
      "report",
      "Rebuild a report's views (HTML, Markdown, JUnit, plots) from a saved report.json, or "
      "from result.json of ratelab run --out");
  report->add_option("result", report_file, "report.json or result.json")->required();
  report->add_option("--out", report_out, "Directory to write the report into")
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
  run->add_option("--store", run_options.store, kStoreHelp);

  StressOptions stress_options;
  CLI::App* stress = app.add_subcommand(
      "stress",
      "Real concurrency: threads, each a limiter process with its own connection, send requests "
      "to a real Redis as fast as it answers; the promise is judged on the wall-clock history "
      "(a decision took effect somewhere between sent and answered); exit 1 when it is broken");
  stress->add_option("protocol", stress_options.protocol,
                     "A kv protocol (ratelab list protocols), or give --lua");
  stress
      ->add_option("--store", stress_options.store,
                   "redis (a private redis-server that ratelab starts and stops), or the URL of a "
                   "running Redis, redis://host:port/db or unix:///path.sock?db=N, or of a Redis "
                   "Cluster, redis-cluster://host:port[,host:port...] (its database must be "
                   "empty; ratelab empties it after the run)")
      ->capture_default_str();
  stress->add_option("--threads", stress_options.threads, "Threads sending at once")
      ->capture_default_str();
  stress->add_option("--duration", stress_options.duration, "How long they send, e.g. 3s, 1m")
      ->capture_default_str();
  stress
      ->add_option("--users", stress_options.users,
                   "Users whose keys the requests go round (fewer users, more contention)")
      ->capture_default_str();
  AddPolicyFlags(*stress, stress_options.policy, kStressPolicyDefaults);
  AddUserScriptFlags(*stress, stress_options.script,
                     "Stress your own Lua script instead of a protocol (with --model)");
  stress->add_flag("--json", stress_options.json, "Print the result as JSON");

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
  if (demo->parsed()) return DemoCommand(seed, demo_out, out, err);
  if (compare->parsed()) {
    if (compare_seed_option->count() > 0) compare_options.seed = compare_seed;
    return CompareCommand(compare_options, out, err);
  }
  if (report->parsed()) return ReportCommand(report_file, report_out, out, err);
  if (check->parsed()) {
    if (check_seed_option->count() > 0) check_options.seed = check_seed;
    if (checks_option->count() > 0) check_options.checks = check_checks;
    return CheckCommand(check_options, out, err);
  }
  if (stress->parsed()) return StressCommand(stress_options, out, err);
  if (run->parsed()) {
    if (seed_option->count() > 0) run_options.seed = run_seed;
    return RunCommand(run_options, out, err);
  }
  out << app.help();
  return kExitOk;
}

}  // namespace ratelab
