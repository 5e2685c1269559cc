#include "cli/run_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "live/server_stores.h"
#include "reports/output_dir.h"
#include "reports/run_report.h"
#include "reports/verdict_table.h"
#include "reports/views.h"
#include "sim/scenario_run.h"
#include "sim/seeds.h"
#include "sim/sweep.h"

namespace ratelab {

namespace {

Status WriteJson(const OutputDir& dir, const nlohmann::json& j) {
  if (Status s = dir.Clear(); !s.ok()) return s;
  const std::string path = (std::filesystem::path(dir.path()) / "result.json").string();
  std::ofstream f(path);
  if (!(f << JsonText(j)) || !f.flush()) {
    return absl::InvalidArgumentError("cannot write " + path);
  }
  return dir.Record();
}

class RunScenarioCommand final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "run",
        "Simulate a scenario file (see docs/scenarios.md and scenarios/), check its oracles, "
        "print the verdicts; exit 1 when a check is broken");
    c->add_option("scenario", scenario_, "Scenario YAML file")->required();
    CLI::Option* seed =
        AddParsed(*c, "--seed", seed_, ParseSeed, "Seed of the run (default: the scenario's)");
    CLI::Option* seeds =
        AddParsed(*c, "--seeds", seeds_, ParseSeeds, std::string("The seeds to sweep") + kSeedsHelp)
            ->excludes(seed);
    AddParsed(*c, "--shard", shard_, ParseShard, kShardHelp)->needs(seeds);
    c->add_option("--jobs", jobs_, "Seeds simulated in parallel")->capture_default_str();
    c->add_option("--out", out_, "Directory to write result.json into");
    AddForceFlag(*c, force_);
    c->add_flag("--json", json_, "Print the result as JSON instead of a table");
    AddJunitOption(*c, junit_);
    c->add_option("--requests", requests_,
                  "Also write every request of the run to this file, one JSON object a line "
                  "(each limiter's: sent, answered, outcome, remaining, reset, Retry-After), "
                  "to compare request by request (one run: not with --seeds)");
    AddStoreOption(*c, store_, kStoreHelp);
    AddMaxSimulatedOption(*c, max_simulated_);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<Scenario> scenario = LoadScenarioOn(scenario_, store_);
    if (!scenario.ok()) return scenario.status();
    if (Status s = CheckRunSize(*scenario, max_simulated_); !s.ok()) return s;
    if (seeds_ && !requests_.empty()) {
      return absl::InvalidArgumentError(
          "--requests writes the requests of one run: give --seed N, not --seeds");
    }
    if (jobs_ < 1 || jobs_ > kMostJobs)
      return absl::InvalidArgumentError(absl::StrCat("--jobs must be between 1 and ", kMostJobs));
    if (!out_.empty()) {
      Result<OutputDir> dir = OutputDir::Prepare(out_, force_, "--out");
      if (!dir.ok()) return dir.status();
      out_dir_ = *std::move(dir);
    }
    if (!seeds_) return RunOne(*scenario, seed_.value_or(scenario->seed), out);
    return Sweep(*scenario, out, err);
  }

 private:
  Result<int> RunOne(const Scenario& scenario, uint64_t seed, std::ostream& out) {
    const SystemClock clock;
    const Instant began = clock.Now();
    Result<RunResult> c = RunScenario(scenario, seed);
    if (!c.ok()) return c.status();
    const double seconds = std::chrono::duration<double>(clock.Now() - began).count();
    if (!requests_.empty()) {
      std::ofstream log(requests_, std::ios::binary | std::ios::trunc);
      if (!log || !WriteRequestLog(*c, log)) {
        return absl::InvalidArgumentError("--requests: cannot write " + requests_ + ": " +
                                          std::strerror(errno));
      }
    }
    const std::string reproduce = ReproduceCommand("run", scenario_, c->seed, store_);
    if (out_dir_ || json_ || !junit_.empty()) {  // the report's metrics cost a pass or two
      RunReport report = MakeRunReport(*c);
      report.reproduce = reproduce;
      const nlohmann::json j = ToJson(report);
      if (out_dir_) {
        if (Status s = WriteJson(*out_dir_, j); !s.ok()) return s;
      }
      if (json_) out << JsonText(j);
      if (!junit_.empty()) {
        if (Status s = WriteTextFile(junit_, RenderJunit(report, seconds)); !s.ok()) return s;
      }
    }
    if (!json_) out << RenderRunText(*c, reproduce);
    if (c->failure_count() > 0) return kExitLimiterFailed;
    return c->violation_count() > 0 ? kExitViolation : kExitOk;
  }

  Result<int> Sweep(const Scenario& scenario, std::ostream& out, std::ostream& err) {
    SeedSpan seeds{seeds_->first, seeds_->last, 1};
    if (shard_) {
      Result<SeedSpan> span = ShardOf(seeds_->first, seeds_->last, *shard_);
      if (!span.ok()) return span.status();
      seeds = *span;
    }
    const SystemClock clock;
    const Instant began = clock.Now();
    const uint64_t report_every = std::max<uint64_t>(1, seeds.count() / 20);
    const InterruptHandler interrupts;
    Result<SweepResult> sweep =
        RunSweep(scenario, seeds, jobs_, [&](uint64_t done, uint64_t failing) {
          if (seeds.count() > 1 && (done % report_every == 0 || done == seeds.count())) {
            err << "progress: " << done << "/" << seeds.count() << " seeds, " << failing
                << " with violations\n";
          }
          return !interrupts.interrupted();
        });
    if (!sweep.ok()) return sweep.status();
    // Interrupted, the sweep is summarised over the seeds it ran.
    const uint64_t count = sweep->seeds.size();
    if (sweep->interrupted) {
      err << "interrupted: " << count << " of " << seeds.count()
          << " seeds run before the signal, summarised\n";
    }
    SweepReport report{scenario.name,
                       {},
                       sweep->seeds_with_violations,
                       std::nullopt,
                       shard_ ? FormatShard(*shard_) : "",
                       ReproduceCommand("run", scenario_, kSeedPlaceholder, store_)};
    for (const SeedOutcome& s : sweep->seeds) {
      report.seeds.push_back({s.seed, HexHash(s.history_hash), s.violations, s.failures});
    }
    // The first failing seed, run again in full (same seed, same run) for its witnesses.
    std::optional<RunResult> shown;
    if (sweep->first_failing) {
      Result<RunResult> c = RunScenario(scenario, *sweep->first_failing);
      if (c.ok()) shown = *std::move(c);
    }
    const std::string reproduce =
        shown ? ReproduceCommand("run", scenario_, shown->seed, store_) : "";
    if (shown) {
      report.first_failing = MakeRunReport(*shown);
      report.first_failing->reproduce = reproduce;
    }
    const nlohmann::json j = ToJson(report);
    if (out_dir_) {
      if (Status s = WriteJson(*out_dir_, j); !s.ok()) return s;
    }
    if (!junit_.empty()) {
      const std::string xml = RenderSweepJunit(
          report, [&](uint64_t seed) { return ReproduceSeed(report, seed); },
          std::chrono::duration<double>(clock.Now() - began).count());
      if (Status s = WriteTextFile(junit_, xml); !s.ok()) return s;
    }
    if (json_) {
      out << JsonText(j);
    } else {
      out << "seeds " << seeds_->first << ".." << seeds_->last
          << (shard_ ? ", shard " + FormatShard(*shard_) + " (" + std::to_string(seeds.count()) +
                           " seeds)"
                     : "")
          << (sweep->interrupted ? " (interrupted, " + std::to_string(count) + " run)" : "") << ": "
          << SeedsBroken(sweep->seeds_with_violations, count) << "\n";
      if (sweep->seeds_with_failures > 0) {
        out << "FAILED: in " << sweep->seeds_with_failures << " of " << count
            << " seeds a limiter answered with its own error instead of a decision\n";
      }
      if (shown) {
        out << "first failing seed " << shown->seed << ":\n\n" << RenderRunText(*shown, reproduce);
      }
    }
    if (sweep->interrupted) return kExitInterrupted;
    return ExitOf(VerdictOf(report));
  }

  std::string scenario_;
  std::optional<uint64_t> seed_;
  std::optional<SeedRange> seeds_;
  std::optional<Shard> shard_;
  int jobs_ = 1;
  std::string out_;
  bool force_ = false;
  int64_t max_simulated_ = kDefaultMaxSimulated;
  std::optional<OutputDir> out_dir_;  // --out, checked before the run
  std::string junit_;
  std::string requests_;  // --requests: where every request of the run is written
  bool json_ = false;
  std::optional<StoreName> store_;
};

}  // namespace

std::string ReproduceCommand(const std::string& command, const std::string& file,
                             const std::string& seed, const std::optional<StoreName>& store) {
  return "ratelab " + command + (file.empty() ? "" : " " + file) + " --seed " + seed +
         (store ? " --store " + store->ToString() : "");
}

std::string ReproduceCommand(const std::string& command, const std::string& file, uint64_t seed,
                             const std::optional<StoreName>& store) {
  return ReproduceCommand(command, file, std::to_string(seed), store);
}

Result<Scenario> LoadScenarioOn(const std::string& path, const std::optional<StoreName>& store) {
  Result<Scenario> scenario = LoadScenario(path);
  if (!scenario.ok()) return scenario;
  if (store) scenario->store = *store;
  if (Status s = CheckStoreIsUsed(*scenario, scenario->store); !s.ok()) {
    return Status(s.code(), path + ": " + std::string(s.message()));
  }
  // One source for the whole command, the embedded one included: a sweep's seeds then compile
  // each script once and make each Lua state once (LuaCache).
  Result<std::shared_ptr<StoreSource>> stores = OpenStoreSource(scenario->store);
  if (!stores.ok()) {
    return Status(stores.status().code(),
                  path + ": store: " + std::string(stores.status().message()));
  }
  scenario->stores = *std::move(stores);
  return scenario;
}

std::unique_ptr<Command> RunCommand() { return std::make_unique<RunScenarioCommand>(); }

}  // namespace ratelab
