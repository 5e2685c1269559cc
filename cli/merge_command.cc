// `ratelab merge FILE...`: the shards of one sweep or one search, each written by a job of a CI
// matrix (`run --seeds A..B --shard K/N --out DIR`, `check --seeds A..B --shard K/N --json`), put
// back together (reports/merge.h) into the one verdict, JSON and JUnit file the whole would have
// made. Exit status: as the whole's (0 nothing found, 1 a violation, 3 a limiter that failed).
#include <CLI/CLI.hpp>
#include <optional>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "reports/check_report.h"
#include "reports/merge.h"
#include "reports/output_dir.h"
#include "reports/views.h"

namespace ratelab {

namespace {

constexpr char kExpected[] =
    "result.json from ratelab run --shard K/N --out DIR, or the output of ratelab check --shard "
    "K/N --json";

class Merge final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "merge",
        "Put the shards of one sweep or search back together (each a job of a CI matrix, run "
        "with --shard K/N): one verdict, one result.json and one JUnit file, as the whole would "
        "have made; exit 1 when a shard found a violation");
    c->add_option("files", files_,
                  "Every shard's file: result.json from run --seeds ... --shard K/N --out DIR, or "
                  "what check --seeds ... --shard K/N --json printed")
        ->required();
    c->add_option("--out", out_, "Directory to write the merged result.json into");
    AddForceFlag(*c, force_);
    c->add_flag("--json", json_, "Print the merged result as JSON");
    AddJunitOption(*c, junit_);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    std::optional<OutputDir> dir;
    if (!out_.empty()) {
      Result<OutputDir> prepared = OutputDir::Prepare(out_, force_, "--out");
      if (!prepared.ok()) return prepared.status();
      dir = *std::move(prepared);
    }
    std::vector<FromFile<SweepReport>> sweeps;
    std::vector<FromFile<CheckReport>> checks;
    for (const std::string& path : files_) {
      Result<nlohmann::json> j = ReadJsonFile(path, kExpected);
      if (!j.ok()) return j.status();
      const auto not_ours = [&](const Status& s) {
        return absl::InvalidArgumentError(path + " is not a shard's result (expected " + kExpected +
                                          "): " + std::string(s.message()));
      };
      if (j->is_object() && j->contains("scenario")) {
        Result<SweepReport> sweep = SweepReportFromJson(*j);
        if (!sweep.ok()) return not_ours(sweep.status());
        sweeps.push_back({path, *std::move(sweep)});
      } else {
        Result<CheckReport> check = CheckReportFromJson(*j);
        if (!check.ok()) return not_ours(check.status());
        checks.push_back({path, *std::move(check)});
      }
    }
    if (!sweeps.empty() && !checks.empty()) {
      return absl::InvalidArgumentError(sweeps.front().first + " is a sweep's and " +
                                        checks.front().first +
                                        " a search's: the shards of one of them merge");
    }
    if (!sweeps.empty()) return MergeSweepShards(sweeps, dir, out, err);
    return MergeCheckShards(checks, dir, out, err);
  }

 private:
  Result<int> MergeSweepShards(const std::vector<FromFile<SweepReport>>& shards,
                               const std::optional<OutputDir>& dir, std::ostream& out,
                               std::ostream& err) const {
    Result<SweepReport> merged = MergeSweeps(shards);
    if (!merged.ok()) return merged.status();
    const nlohmann::json j = ToJson(*merged);
    if (Status s = Write(dir, j,
                         [&] {
                           return RenderSweepJunit(
                               *merged, [&](uint64_t seed) { return ReproduceSeed(*merged, seed); },
                               0);
                         });
        !s.ok()) {
      return s;
    }
    uint64_t failed = 0;
    for (const SeedReport& s : merged->seeds) failed += s.failed > 0;
    err << "merged " << shards.size() << " shards: " << merged->seeds.size() << " seeds\n";
    if (json_) {
      out << JsonText(j);
    } else {
      out << merged->scenario << ": "
          << SeedsBroken(merged->seeds_with_violations, merged->seeds.size()) << "\n";
      if (failed > 0) {
        out << "FAILED: in " << failed << " of " << merged->seeds.size()
            << " seeds a limiter answered with its own error instead of a decision\n";
      }
      if (merged->first_failing) {
        out << "first failing seed " << merged->first_failing->seed << ": "
            << ReproduceSeed(*merged, merged->first_failing->seed) << "\n";
      }
    }
    return ExitOf(VerdictOf(*merged));
  }

  Result<int> MergeCheckShards(const std::vector<FromFile<CheckReport>>& shards,
                               const std::optional<OutputDir>& dir, std::ostream& out,
                               std::ostream& err) const {
    Result<CheckReport> merged = MergeChecks(shards);
    if (!merged.ok()) return merged.status();
    const nlohmann::json j = ToJson(*merged);
    if (Status s = Write(dir, j, [&] { return RenderCheckJunit(*merged, 0); }); !s.ok()) return s;
    err << "merged " << shards.size() << " shards: " << merged->seeds_searched
        << " seed(s) searched\n";
    out << (json_ ? JsonText(j) : RenderCheckText(*merged));
    return ExitOf(merged->verdict);
  }

  // The merged result into --out's result.json, and its JUnit (made by `junit`) into --junit.
  template <typename Junit>
  Status Write(const std::optional<OutputDir>& dir, const nlohmann::json& j, Junit junit) const {
    if (dir) {
      if (Status s = dir->Clear(); !s.ok()) return s;
      if (Status s = WriteTextFile(dir->path() + "/result.json", JsonText(j)); !s.ok()) {
        return s;
      }
      if (Status s = dir->Record(); !s.ok()) return s;
    }
    return junit_.empty() ? absl::OkStatus() : WriteTextFile(junit_, junit());
  }

  std::vector<std::string> files_;
  std::string out_;
  bool force_ = false;
  bool json_ = false;
  std::string junit_;
};

}  // namespace

std::unique_ptr<Command> MergeCommand() { return std::make_unique<Merge>(); }

}  // namespace ratelab
