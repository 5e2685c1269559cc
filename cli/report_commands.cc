#include "cli/report_commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/run_command.h"
#include "reports/across_seeds.h"
#include "reports/any_report.h"
#include "reports/check_report.h"
#include "reports/probe_report.h"
#include "reports/run_report.h"
#include "reports/stress_report.h"
#include "reports/verdict_table.h"
#include "reports/views.h"
#include "reports/worst_report.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

constexpr char kDefaultReportDir[] = "ratelab-report";
constexpr char kOutHelp[] =
    "Directory for report.html, report.md, report.json, junit.xml and plots/";

// Runs `scenario`, telling `err` which limiter is being simulated.
Result<RunResult> RunWithProgress(const Scenario& scenario, uint64_t seed, std::ostream& err) {
  return RunScenario(scenario, seed, [&err](const std::string& limiter, size_t i, size_t n) {
    err << "simulating " << (i + 1) << "/" << n << ": " << limiter << "\n";
  });
}

// Where a report goes: --out, checked before any work (OutputDir::Prepare).
struct ReportOut {
  std::string dir = kDefaultReportDir;
  bool force = false;

  void Add(CLI::App& c, const std::string& help) {
    c.add_option("--out", dir, help)->capture_default_str();
    AddForceFlag(c, force);
  }
  Result<OutputDir> Prepare() const { return OutputDir::Prepare(dir, force, "--out"); }
};

// Writes `report` into `dir` and says where it is.
Status Write(const RunReport& report, const OutputDir& dir, std::ostream& out, std::ostream& err) {
  Result<ReportFiles> files = WriteReport(report, dir);
  if (!files.ok()) return files.status();
  if (!files->plot_error.empty()) err << "warning: no plots: " << files->plot_error << "\n";
  // Absolute, so the path can be opened from wherever the command ran.
  const auto at = [](const std::string& path) { return std::filesystem::absolute(path).string(); };
  out << "\nreport: " << at(files->html) << "\n  also report.md, report.json, junit.xml";
  if (!files->plots.empty()) out << " and " << files->plots.size() << " plots (SVG) in plots/";
  out << ", beside it\n";
  return absl::OkStatus();
}

// The report of `c`, replayed by `reproduce`.
RunReport ReportOf(const RunResult& c, const std::string& reproduce) {
  RunReport report = MakeRunReport(c);
  report.reproduce = reproduce;
  return report;
}

class Compare final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "compare",
        "Simulate a scenario file and write a report comparing its limiters: report.html, "
        "report.md, report.json, junit.xml and plots/ (exit 0 once written)");
    c->add_option("scenario", scenario_, "Scenario YAML file")->required();
    CLI::Option* seed =
        AddParsed(*c, "--seed", seed_, ParseSeed, "Seed of the run (default: the scenario's)");
    AddParsed(*c, "--seeds", seeds_, ParseSeeds,
              std::string("Run every seed of a range and report each limiter's median and worst "
                          "over them, showing in full the first seed that broke a check") +
                  kSeedsHelp)
        ->excludes(seed);
    out_.Add(*c, "Directory to write the report into");
    c->add_flag("--strict", strict_,
                "Exit 1 when a check is broken (the claim is one), 3 when a limiter answered "
                "with its own error");
    c->add_flag("--json", json_, "Print report.json instead of the text");
    AddJunitOption(*c, junit_);
    AddStoreOption(*c, store_, kStoreHelp);
    AddMaxSimulatedOption(*c, max_simulated_);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<Scenario> scenario = LoadScenarioOn(scenario_, store_);
    if (!scenario.ok()) return scenario.status();
    if (Status s = CheckRunSize(*scenario, max_simulated_); !s.ok()) return s;
    Result<OutputDir> dir = out_.Prepare();
    if (!dir.ok()) return dir.status();
    if (seeds_) return AcrossSeeds(*scenario, *dir, out, err);
    Result<RunResult> c = RunWithProgress(*scenario, seed_.value_or(scenario->seed), err);
    if (!c.ok()) return c.status();
    const std::string reproduce = ReproduceCommand("compare", scenario_, c->seed, store_);
    if (!json_) out << RenderRunText(*c, reproduce);
    if (Status s = Write(ReportOf(*c, reproduce), *dir, out, err); !s.ok()) return s;
    if (strict_ && c->failure_count() > 0) return kExitLimiterFailed;
    return strict_ && c->violation_count() > 0 ? kExitViolation : kExitOk;
  }

 private:
  // compare --seeds: every seed run, the first that broke a check shown in full.
  Result<int> AcrossSeeds(const Scenario& scenario, const OutputDir& dir, std::ostream& out,
                          std::ostream& err) {
    const uint64_t total = seeds_->count();
    const uint64_t report_every = std::max<uint64_t>(1, total / 20);
    const InterruptHandler interrupts;
    Result<RunReport> report = CompareAcrossSeeds(
        scenario, seeds_->first, seeds_->last,
        [&](uint64_t seed) { return ReproduceCommand("compare", scenario_, seed, store_); },
        [&](uint64_t done) {
          if (done % report_every == 0 || done == total) {
            err << "progress: " << done << "/" << total << " seeds\n";
          }
          return !interrupts.interrupted();
        });
    if (!report.ok()) return report.status();
    const SeedsSpreadReport& spread = *report->across_seeds;
    if (spread.count < total) {
      err << "interrupted: " << spread.count << " of " << total
          << " seeds run before the signal, summarised\n";
    }
    if (!json_) out << RenderSpreadTable(*report) << "\n";
    if (Status s = Write(*report, dir, out, err); !s.ok()) return s;
    if (spread.count < total) return kExitInterrupted;
    return strict_ ? ExitOf(VerdictOf(*report)) : kExitOk;
  }

  // The report into --out, and as --json and --junit ask; where it went on stdout, or on stderr
  // when stdout holds the JSON.
  Status Write(const RunReport& report, const OutputDir& dir, std::ostream& out,
               std::ostream& err) const {
    if (Status s = ratelab::Write(report, dir, json_ ? err : out, err); !s.ok()) return s;
    if (json_) out << JsonText(ToJson(report));
    return junit_.empty() ? absl::OkStatus() : WriteTextFile(junit_, RenderJunit(report));
  }

  std::string scenario_;
  std::optional<uint64_t> seed_;
  std::optional<SeedRange> seeds_;
  ReportOut out_;
  bool json_ = false;
  std::string junit_;
  bool strict_ = false;
  int64_t max_simulated_ = kDefaultMaxSimulated;
  std::optional<StoreName> store_;
};

class ReportFromFile final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "report",
        "Rebuild a report's views (HTML, Markdown, JUnit, and a run's plots) from its JSON: "
        "report.json of compare or demo, result.json of run --out, or what --json printed by "
        "run, check, stress, probe or worst");
    c->add_option("result", file_, "the report's JSON")->required();
    out_.Add(*c, "Directory to write the report into");
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<nlohmann::json> read = ReadJsonFile(file_, "its report.json or result.json");
    if (!read.ok()) return read.status();
    Result<AnyReport> report = ReadAnyReport(*read);
    if (!report.ok()) {
      return absl::InvalidArgumentError(file_ + " is " + std::string(report.status().message()));
    }
    // A sweep's views are its first failing seed's run.
    if (const SweepReport* sweep = std::get_if<SweepReport>(&*report)) {
      if (!sweep->first_failing) {
        return absl::InvalidArgumentError(
            file_ +
            " is a sweep in which no seed failed: there is no run in it to report on; run one "
            "seed with ratelab compare");
      }
      report = AnyReport(*sweep->first_failing);
    }
    Result<OutputDir> dir = out_.Prepare();
    if (!dir.ok()) return dir.status();
    if (const RunReport* run = std::get_if<RunReport>(&*report)) {
      out << "ratelab report: " << run->scenario << ", seed " << run->seed << "\n";
      if (Status s = Write(*run, *dir, out, err); !s.ok()) return s;
      return kExitOk;
    }
    // The views of a check, a stress run, a probe or a worst-case search: what it is, and the
    // path of its HTML page.
    struct Written {
      std::string title;
      Result<std::string> html;
    };
    const Written written = std::visit(
        [&](const auto& r) -> Written {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, CheckReport>) {
            return {"check of " + r.protocol, WriteCheckReport(r, *dir, 0)};
          } else if constexpr (std::is_same_v<T, StressReport>) {
            return {"stress of " + r.protocol, WriteStressReport(r, *dir)};
          } else if constexpr (std::is_same_v<T, ProbeReport>) {
            return {"probe of " + r.url, WriteProbeReport(r, *dir)};
          } else if constexpr (std::is_same_v<T, WorstReport>) {
            return {"worst of " + r.protocol, WriteWorstReport(r, *dir)};
          } else {
            return {"", absl::InternalError("a run's report is written above")};
          }
        },
        *report);
    if (!written.html.ok()) return written.html.status();
    out << "ratelab report: " << written.title
        << "\n\nreport: " << std::filesystem::absolute(*written.html).string()
        << "\n  also report.md, report.json, junit.xml, beside it\n";
    return kExitOk;
  }

 private:
  std::string file_;
  ReportOut out_;
};

class Demo final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "demo",
        "Compare every algorithm in process on a built-in scenario (steady traffic, a boundary "
        "attack, a burst, many users) over 20 seeds, print the verdicts and write a report");
    CLI::Option* seed = AddParsed(*c, "--seed", seed_, ParseSeed,
                                  "Run this one seed only (it drives the many-users traffic)");
    AddParsed(*c, "--seeds", seeds_, ParseSeeds,
              std::string("The seeds to compare over (default: 1..20); the report shows the "
                          "first in full, and picks a limiter for a goal only where it led in "
                          "every seed") +
                  kSeedsHelp)
        ->excludes(seed);
    out_.Add(*c, kOutHelp);
    c->add_flag("--json", json_, "Print report.json instead of the text");
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<OutputDir> dir = out_.Prepare();
    if (!dir.ok()) return dir.status();
    std::optional<RunReport> spread;
    if (!seed_) {
      const SeedRange seeds = seeds_.value_or(SeedRange{1, 20});
      const InterruptHandler interrupts;
      Result<RunReport> report = CompareAcrossSeeds(
          DemoScenario(), seeds.first, seeds.last,
          [](uint64_t seed) { return ReproduceCommand("demo", "", seed); },
          [&](uint64_t) { return !interrupts.interrupted(); });
      if (!report.ok()) return report.status();
      if (report->across_seeds->count < seeds.count()) {
        err << "interrupted: " << report->across_seeds->count << " of " << seeds.count()
            << " seeds run before the signal, summarised\n";
      }
      spread = *std::move(report);
    }
    const uint64_t seed = spread ? spread->seed : *seed_;
    Result<RunResult> c = RunWithProgress(DemoScenario(), seed, err);
    if (!c.ok()) return c.status();
    // With --json, stdout holds report.json alone; where the report went goes to stderr.
    std::ostringstream discarded;
    std::ostream& text = json_ ? discarded : out;
    text << "ratelab demo, "
         << (spread ? "seeds " + std::to_string(spread->across_seeds->first) + ".." +
                          std::to_string(spread->across_seeds->last) + " (seed " +
                          std::to_string(seed) + " in full)"
                    : "seed " + std::to_string(seed))
         << ": every algorithm in process, on the same traffic, compared against the claim \""
         << c->limit << " in any " << FormatDuration(c->window) << "\"\n\ntraffic:\n";
    for (const std::string& line : c->traffic) text << "  - " << line << "\n";
    text << "\n" << RenderVerdictTable(*c) << "\n";
    const std::string witnesses = RenderWitnesses(*c);
    if (!witnesses.empty()) text << "first witness of each broken claim:\n" << witnesses << "\n";
    text
        << "Reading it: \"own promise\" is what the algorithm guarantees (aligned windows for the\n"
           "fixed window and the counter, any window for the log, burst plus rate for the "
           "buckets);\nthe last column holds every limiter to the claim above. The fixed window "
           "keeps its\npromise yet admits twice the limit across a window edge.\n\n";
    if (spread) text << RenderSpreadTable(*spread) << "\n";
    const std::string reproduce = ReproduceCommand("demo", "", seed);
    text << "reproduce: " << reproduce << "\n";
    const RunReport report = spread ? *std::move(spread) : ReportOf(*c, reproduce);
    if (Status s = Write(report, *dir, json_ ? err : out, err); !s.ok()) return s;
    if (json_) out << JsonText(ToJson(report));
    return kExitOk;
  }

 private:
  std::optional<uint64_t> seed_;
  std::optional<SeedRange> seeds_;
  ReportOut out_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> CompareCommand() { return std::make_unique<Compare>(); }
std::unique_ptr<Command> ReportCommand() { return std::make_unique<ReportFromFile>(); }
std::unique_ptr<Command> DemoCommand() { return std::make_unique<Demo>(); }

}  // namespace ratelab
