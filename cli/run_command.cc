#include "cli/run_command.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "cli/ratelab_cli.h"
#include "reports/result_json.h"
#include "reports/verdict_table.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

// "A..B" with A <= B; empty when malformed.
std::optional<std::pair<uint64_t, uint64_t>> ParseSeedRange(const std::string& text) {
  const size_t dots = text.find("..");
  if (dots == std::string::npos || dots == 0 || dots + 2 >= text.size()) return std::nullopt;
  try {
    size_t used = 0;
    const std::string from = text.substr(0, dots), to = text.substr(dots + 2);
    const uint64_t a = std::stoull(from, &used);
    if (used != from.size()) return std::nullopt;
    const uint64_t b = std::stoull(to, &used);
    if (used != to.size() || a > b) return std::nullopt;
    return std::pair{a, b};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool WriteJson(const std::string& dir, const nlohmann::json& j, std::ostream& err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / "result.json").string();
  std::ofstream f(path);
  if (ec || !(f << j.dump(2) << "\n")) {
    err << "ratelab run: cannot write " << path << "\n";
    return false;
  }
  return true;
}

}  // namespace

void PrintComparison(const Comparison& c, const std::string& reproduce, std::ostream& out) {
  out << "scenario " << c.scenario << ", seed " << c.seed << ", history "
      << HexHash(c.history_hash()) << (c.buggify ? ", BUGGIFY on" : "") << "\n";
  for (const FaultWindow& fault : c.faults) out << "fault: " << fault.what << "\n";
  out << "\n" << RenderVerdictTable(c);
  for (const LimiterOutcome& o : c.limiters) {
    if (o.unanswered > 0) {
      out << "\n"
          << o.name << ": " << o.unanswered
          << " request(s) got no answer (lost in a crash, or sent while every node was down)";
    }
  }
  for (const std::string& note : c.notes) out << "\nnote: " << note;
  const std::string witnesses = RenderWitnesses(c);
  if (!witnesses.empty()) out << "\n\nfirst witness of each violation:\n" << witnesses;
  out << "\nreproduce: " << reproduce << "\n";
}

std::string ReproduceCommand(const std::string& command, const std::string& file, uint64_t seed,
                             const std::string& store) {
  return "ratelab " + command + (file.empty() ? "" : " " + file) + " --seed " +
         std::to_string(seed) + (store.empty() ? "" : " --store " + store);
}

Status UseStore(const std::string& store, Scenario& scenario) {
  if (store.empty()) return absl::OkStatus();
  Result<std::shared_ptr<KvStoreSource>> source = KvStoreSource::Make(store);
  if (!source.ok())
    return absl::InvalidArgumentError("--store: " + std::string(source.status().message()));
  scenario.kv_store = source->get()->memory() ? nullptr : *std::move(source);
  return absl::OkStatus();
}

int RunCommand(const RunOptions& options, std::ostream& out, std::ostream& err) {
  Result<Scenario> scenario = LoadScenario(options.scenario);
  if (!scenario.ok()) {
    err << "ratelab run: " << scenario.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status s = UseStore(options.store, *scenario); !s.ok()) {
    err << "ratelab run: " << s.message() << "\n";
    return kExitBadInput;
  }
  if (options.jobs < 1 || options.jobs > 256) {
    err << "ratelab run: --jobs must be between 1 and 256\n";
    return kExitBadInput;
  }
  if (options.seeds.empty()) {
    Result<Comparison> c = RunScenario(*scenario, options.seed.value_or(scenario->seed));
    if (!c.ok()) {
      err << "ratelab run: " << c.status().message() << "\n";
      return kExitBadInput;
    }
    if (!options.out.empty() || options.json) {  // the JSON's metrics cost a pass or two
      nlohmann::json j = ResultJson(*c);
      j["reproduce"] = ReproduceCommand("run", options.scenario, c->seed, options.store);
      if (!options.out.empty() && !WriteJson(options.out, j, err)) return kExitBadInput;
      if (options.json) out << j.dump(2) << "\n";
    }
    if (!options.json) {
      PrintComparison(*c, ReproduceCommand("run", options.scenario, c->seed, options.store), out);
    }
    return c->violation_count() > 0 ? kExitViolation : kExitOk;
  }

  const auto range = ParseSeedRange(options.seeds);
  if (!range) {
    err << "ratelab run: --seeds must be A..B with A <= B (got '" << options.seeds << "')\n";
    return kExitBadInput;
  }
  const uint64_t count = range->second - range->first + 1;
  struct SeedRun {
    uint64_t hash = 0;
    int64_t violations = 0;
  };
  std::vector<SeedRun> runs(count);
  std::atomic<uint64_t> next{0}, done{0}, failing{0};
  std::string error;  // the first run that could not be made
  const uint64_t report_every = std::max<uint64_t>(1, count / 20);
  std::mutex progress;  // guards `err` and `error`
  auto worker = [&] {
    for (uint64_t i = next++; i < count; i = next++) {
      Result<Comparison> c = RunScenario(*scenario, range->first + i);
      if (!c.ok()) {
        std::lock_guard<std::mutex> lock(progress);
        if (error.empty()) error = std::string(c.status().message());
        continue;
      }
      runs[i] = {c->history_hash(), c->violation_count()};
      if (runs[i].violations > 0) ++failing;
      const uint64_t finished = ++done;
      if (count > 1 && (finished % report_every == 0 || finished == count)) {
        std::lock_guard<std::mutex> lock(progress);
        err << "progress: " << finished << "/" << count << " seeds, " << failing.load()
            << " with violations\n";
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < options.jobs; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  if (!error.empty()) {
    err << "ratelab run: " << error << "\n";
    return kExitBadInput;
  }

  nlohmann::json seeds = nlohmann::json::array();
  std::optional<uint64_t> first_failing;
  for (uint64_t i = 0; i < count; ++i) {
    seeds.push_back({{"seed", range->first + i},
                     {"history_hash", HexHash(runs[i].hash)},
                     {"violations", runs[i].violations}});
    if (runs[i].violations > 0 && !first_failing) first_failing = range->first + i;
  }
  // The first failing seed, run again in full (same seed, same run) for its witnesses.
  std::optional<Comparison> shown;
  if (first_failing) {
    Result<Comparison> c = RunScenario(*scenario, *first_failing);
    if (c.ok()) shown = *std::move(c);
  }
  nlohmann::json failing_run;  // null when no seed failed
  if (shown) {
    failing_run = ResultJson(*shown);
    failing_run["reproduce"] =
        ReproduceCommand("run", options.scenario, shown->seed, options.store);
  }
  nlohmann::json j = {{"scenario", scenario->name},
                      {"seeds", seeds},
                      {"seeds_with_violations", failing.load()},
                      {"first_failing", failing_run}};
  if (!options.out.empty() && !WriteJson(options.out, j, err)) return kExitBadInput;
  if (options.json) {
    out << j.dump(2) << "\n";
  } else {
    out << "seeds " << options.seeds << ": " << failing.load() << " of " << count
        << " with violations\n";
    if (shown) {
      out << "first failing seed " << *first_failing << ":\n\n";
      PrintComparison(*shown, ReproduceCommand("run", options.scenario, shown->seed, options.store),
                      out);
    }
  }
  return failing.load() > 0 ? kExitViolation : kExitOk;
}

}  // namespace ratelab
