#include "cli/check_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/limiter_flags.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "live/server_stores.h"
#include "reports/check_report.h"
#include "sim/scenario_run.h"
#include "sim/search.h"
#include "sim/seeds.h"

namespace ratelab {

namespace {

const SearchFaults kDefaultFaults = {FaultKind::kCrash, FaultKind::kStoreRestart};

class Check final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "check",
        "Search for a violation of what a protocol promises (random traffic, interleavings and "
        "faults through the simulator), shrink it, and print the minimal witness; exit 1 when "
        "one is found");
    limiter_.Add(*c, "A protocol from ratelab list protocols (or give --lua)",
                 "Check your own Lua script instead of a protocol (with --model)");
    AddParsed(*c, "--seeds", seeds_, ParseSeeds,
              std::string("The seeds to search (default: 200)") + kSeedsHelp);
    CLI::Option* seed =
        AddParsed(*c, "--seed", seed_, ParseSeed, "Search this one seed (to replay a finding)");
    AddParsed(*c, "--shard", shard_, ParseShard, kShardHelp)->excludes(seed);
    c->add_option("--jobs", jobs_,
                  "Seeds searched side by side, on as many threads (the embedded store only; "
                  "the verdict, the seed and the witness are the same whatever the number)")
        ->capture_default_str();
    nodes_option_ = c->add_option("--nodes", concurrency_,
                                  "Limiter nodes sending requests at once, each its own process "
                                  "(default 3; 1 for --exec, the one process given)");
    faults_option_ = AddParsed(*c, "--faults", faults_, ParseSearchFaults,
                               "Comma-separated faults to inject: "
                               "crash, store-restart, clock-skew, store-outage, store-stall (the "
                               "store answers nothing for a while, then runs what it was sent), "
                               "store-failover (to a replica that lags: --store memory only), or "
                               "none (default crash,store-restart)");
    c->add_flag("--claim", claim_, "Also hold it to the claim: no more than N in any W");
    c->add_flag("--shrink-policy", shrink_policy_,
                "Let the shrink lower the limit (or burst) too; by default the witness keeps the "
                "policy given");
    AddParsed(*c, "--checks", checks_, ParseCheckList,
              "Comma-separated checks instead of the protocol's own (see ratelab list checks), "
              "e.g. survives-restart");
    AddParsed(*c, "--durability", durability_, ParseDurability,
              "What the store keeps over a restart: none, everysec, always (default always)");
    AddStoreOption(*c, store_, std::string(kStoreHelp) + " (default memory)");
    AddParsed(*c, "--start", start_, ParseStart,
              "Where the virtual clock starts, a UTC instant (default 2026-01-01T00:00:00Z)");
    c->add_flag("--json", json_, "Print the verdict as JSON");
    AddJunitOption(*c, junit_);
    out_.Add(*c);
    AddMaxSimulatedOption(*c, max_simulated_);
    AddMaxTransitOption(*c, max_transit_);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    if (limiter_.script.exec && nodes_option_->count() == 0) concurrency_ = 1;
    if (limiter_.script.exec && faults_option_->count() == 0) {
      faults_ = {};
      err << "note: no faults by default for --exec: a limiter in a process's memory forgets "
             "its state when the process restarts (--faults crash shows what that costs)\n";
    }
    Result<std::shared_ptr<const ProtocolInfo>> resolved = limiter_.Resolve();
    if (!resolved.ok()) return resolved.status();
    const std::shared_ptr<const ProtocolInfo> protocol = *std::move(resolved);
    Result<Policy> policy = limiter_.PolicyOf(*protocol);
    if (!policy.ok()) return policy.status();
    if (concurrency_ < 1 || concurrency_ > 64) {
      return absl::InvalidArgumentError("--nodes must be between 1 and 64");
    }
    if (Status s = CheckCaseSize(*policy, max_simulated_); !s.ok()) return s;
    Result<std::optional<OutputDir>> out_dir = out_.Prepare();  // before the search
    if (!out_dir.ok()) return out_dir.status();

    SearchOptions search;
    search.base.policy = *policy;
    search.base.durability = durability_;
    search.base.start = start_;
    search.base.max_transit = max_transit_;
    search.base.checks = checks_.value_or(DefaultChecks(*protocol));
    if (claim_) search.base.checks.push_back(CheckId::kAnyWindowCap);
    search.faults = faults_;
    search.concurrency = concurrency_;
    search.shrink_policy = shrink_policy_;
    search.jobs = jobs_;
    search.seeds = {seed_.value_or(seeds_.first), seed_.value_or(seeds_.last), 1};
    if (shard_) {
      Result<SeedSpan> span = ShardOf(seeds_.first, seeds_.last, *shard_);
      if (!span.ok()) return span.status();
      search.seeds = *span;
    }
    if (store_.kind != StoreName::Kind::kMemory) {
      if (search.faults.contains(FaultKind::kStoreFailover)) {
        return absl::InvalidArgumentError(
            "--faults store-failover needs --store memory: only the in-memory store models a "
            "replica "
            "(the one "
            "at " +
            store_.ToString() + " has none ratelab can fail over to)");
      }
      Result<std::shared_ptr<StoreSource>> stores = OpenStoreSource(store_);
      if (!stores.ok()) return stores.status();
      search.stores = *std::move(stores);
      // A server ratelab did not start cannot be restarted by it.
      const StoreKind on = protocol->store;
      const bool foreign = !store_.CanRestart(on == StoreKind::kKv, on == StoreKind::kSql);
      if (foreign && search.faults.contains(FaultKind::kStoreRestart)) {
        if (faults_option_->count() > 0) {
          return absl::InvalidArgumentError(
              "--faults store-restart needs a server that ratelab starts (--store redis or "
              "postgres): "
              "it cannot restart the one at " +
              store_.ToString());
        }
        search.faults.erase(FaultKind::kStoreRestart);
        err << "note: no store restarts: ratelab cannot restart the server at " << store_.ToString()
            << "\n";
      }
    }

    const SystemClock clock;
    const Instant began = clock.Now();
    Instant last_said = began;
    const InterruptHandler interrupts;
    search.stop = &interrupts.flag();  // a script running then ends at once
    // Every 50 seeds, and at least every few seconds when seeds are slow; Ctrl-C stops it. Counted
    // in the seeds this search runs (a shard's, a range's), the seed in hand beside them.
    Result<SearchResult> result = Search(protocol, search, [&](uint64_t seed) {
      const Instant now = clock.Now();
      const uint64_t done = (seed - search.seeds.first) / search.seeds.step + 1;
      if (done % 50 == 0 || now - last_said >= std::chrono::seconds(3)) {
        err << "progress: " << done << "/" << search.seeds.count() << " seeds (seed " << seed
            << "), nothing yet\n";
        last_said = now;
      }
      return !interrupts.interrupted();
    });
    if (!result.ok()) return result.status();
    const double seconds = std::chrono::duration<double>(clock.Now() - began).count();
    if (result->interrupted) {
      err << "interrupted: nothing found in the " << result->seeds_searched
          << " seed(s) searched before the signal (of " << search.seeds.count() << ")\n";
      // CI still learns that the checks did not run through: each skipped, with why.
      if (!junit_.empty()) {
        const CheckReport report = MakeCheckReport(protocol, search, *result, "");
        if (Status s = WriteTextFile(
                junit_, RenderInterruptedCheckJunit(report, search.seeds.count(), seconds));
            !s.ok()) {
          return s;
        }
      }
      return kExitInterrupted;
    }
    const bool found = result->finding || result->failure;
    char took[32];
    std::snprintf(took, sizeof took, "%.3f s", seconds);
    err << (found ? "found after " : "searched ") << result->seeds_searched << " seed(s) in "
        << took
        << (shard_ ? absl::StrCat(" (shard ", FormatShard(*shard_), " of ", seeds_.first, "..",
                                  seeds_.last, ")")
                   : "")
        << "\n";
    const uint64_t found_at = result->failure   ? result->failure->seed
                              : result->finding ? result->finding->seed
                                                : 0;
    CheckReport report = MakeCheckReport(protocol, search, *result, Reproduce(found_at));
    if (shard_) report.shard = FormatShard(*shard_);
    out << (json_ ? JsonText(ToJson(report)) : RenderCheckText(report));
    if (!junit_.empty()) {
      if (Status s = WriteTextFile(junit_, RenderCheckJunit(report, seconds)); !s.ok()) return s;
    }
    if (*out_dir) {
      if (Status s = SayReport(WriteCheckReport(report, **out_dir, seconds), err); !s.ok()) {
        return s;
      }
    }
    return ExitOf(report.verdict);
  }

 private:
  // The command that replays `seed` with the options the user gave.
  std::string Reproduce(uint64_t seed) const {
    std::string out = "ratelab check" + limiter_.Flags() + " --seed " + std::to_string(seed);
    if (faults_option_->count() > 0) out += " --faults " + faults_.ToString();
    if (nodes_option_->count() > 0) out += " --nodes " + std::to_string(concurrency_);
    if (durability_ != Durability::kAlways) {
      out += " --durability " + std::string(DurabilityName(durability_));
    }
    if (store_.kind != StoreName::Kind::kMemory) out += " --store " + store_.ToString();
    if (checks_) out += " --checks " + FormatCheckList(*checks_);
    if (claim_) out += " --claim";
    if (shrink_policy_) out += " --shrink-policy";
    if (start_ != kDefaultScenarioStart) out += " --start " + FormatUtc(start_);
    if (max_transit_) out += " --max-transit " + FormatDuration(*max_transit_);
    return out;
  }

  LimiterFlags limiter_{kDefaultPolicy};
  SeedRange seeds_{1, 200};
  std::optional<Shard> shard_;
  std::string junit_;
  OptionalReportDir out_;
  int64_t max_simulated_ = kDefaultMaxSimulated;
  std::optional<Duration> max_transit_;
  std::optional<uint64_t> seed_;
  int concurrency_ = 3;
  int jobs_ = 1;
  CLI::Option* nodes_option_ = nullptr;
  SearchFaults faults_ = kDefaultFaults;
  CLI::Option* faults_option_ = nullptr;
  bool claim_ = false;
  bool shrink_policy_ = false;
  std::optional<std::vector<CheckId>> checks_;
  Durability durability_ = Durability::kAlways;
  StoreName store_;
  Instant start_ = kDefaultScenarioStart;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> CheckCommand() { return std::make_unique<Check>(); }

}  // namespace ratelab
