#include "cli/report_commands.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/ratelab_cli.h"
#include "cli/run_command.h"
#include "reports/result_json.h"
#include "reports/verdict_table.h"
#include "reports/views.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

// Runs `scenario`, telling `err` which limiter is being simulated.
Result<Comparison> RunWithProgress(const Scenario& scenario, uint64_t seed, std::ostream& err) {
  return RunScenario(scenario, seed, [&err](const std::string& limiter, size_t i, size_t n) {
    err << "simulating " << (i + 1) << "/" << n << ": " << limiter << "\n";
  });
}

// Writes the report of `j` into `dir` and says where it is; false (with the reason on `err`)
// when it could not be written.
bool Write(const char* command, const nlohmann::json& j, const std::string& dir, std::ostream& out,
           std::ostream& err) {
  Result<ReportFiles> files = WriteReport(j, dir);
  if (!files.ok()) {
    err << "ratelab " << command << ": " << files.status().message() << "\n";
    return false;
  }
  if (!files->plot_error.empty()) {
    err << "ratelab " << command << ": warning: no plots: " << files->plot_error << "\n";
  }
  // Absolute, so the path can be opened from wherever the command ran.
  const auto at = [](const std::string& path) { return std::filesystem::absolute(path).string(); };
  out << "\nreport: " << at(files->html) << "\n  also report.md, report.json, junit.xml";
  if (!files->plots.empty()) out << " and " << files->plots.size() << " plots (SVG) in plots/";
  out << ", beside it\n";
  return true;
}

}  // namespace

int CompareCommand(const CompareOptions& options, std::ostream& out, std::ostream& err) {
  Result<Scenario> scenario = LoadScenario(options.scenario);
  if (!scenario.ok()) {
    err << "ratelab compare: " << scenario.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status s = UseStore(options.store, *scenario); !s.ok()) {
    err << "ratelab compare: " << s.message() << "\n";
    return kExitBadInput;
  }
  Result<Comparison> c = RunWithProgress(*scenario, options.seed.value_or(scenario->seed), err);
  if (!c.ok()) {
    err << "ratelab compare: " << c.status().message() << "\n";
    return kExitBadInput;
  }
  const std::string reproduce =
      ReproduceCommand("compare", options.scenario, c->seed, options.store);
  PrintComparison(*c, reproduce, out);
  nlohmann::json j = ResultJson(*c);
  j["reproduce"] = reproduce;
  if (!Write("compare", j, options.out, out, err)) return kExitBadInput;
  return options.strict && c->violation_count() > 0 ? kExitViolation : kExitOk;
}

int ReportCommand(const std::string& file, const std::string& dir, std::ostream& out,
                  std::ostream& err) {
  std::ifstream in(file);
  if (!in) {
    err << "ratelab report: cannot read " << file << "\n";
    return kExitBadInput;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    err << "ratelab report: " << file << ": not JSON: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (j.is_object() && j.contains("first_failing")) {  // a sweep: its first failing seed
    if (j["first_failing"].is_null()) {
      err << "ratelab report: " << file
          << " is a sweep in which no seed failed: there is no run in it to report on; run one "
             "seed with ratelab compare\n";
      return kExitBadInput;
    }
    j = nlohmann::json(j["first_failing"]);
  }
  if (!j.is_object() || !j.contains("limiters") || !j.contains("bins")) {
    err << "ratelab report: " << file
        << " is not a ratelab result (expected report.json from ratelab compare, or result.json "
           "from ratelab run --out)\n";
    return kExitBadInput;
  }
  out << "ratelab report: " << j.value("scenario", std::string("?")) << ", seed "
      << j.value("seed", uint64_t{0}) << "\n";
  return Write("report", j, dir, out, err) ? kExitOk : kExitBadInput;
}

int DemoCommand(uint64_t seed, const std::string& dir, std::ostream& out, std::ostream& err) {
  Result<Comparison> c = RunWithProgress(DemoScenario(), seed, err);
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
         "promise yet admits twice the limit across a window edge.\n\n";
  const std::string reproduce = ReproduceCommand("demo", "", seed);
  out << "reproduce: " << reproduce << "\n";
  nlohmann::json j = ResultJson(*c);
  j["reproduce"] = reproduce;
  return Write("demo", j, dir, out, err) ? kExitOk : kExitBadInput;
}

}  // namespace ratelab
