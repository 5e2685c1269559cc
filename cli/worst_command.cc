// `ratelab worst PROTOCOL|--lua ...`: how far past its claim a limiter can be pushed (sim/worst.h),
// at each concurrency asked, printed (reports/worst_report.h) with the best case as a witness.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/limiter_flags.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "live/server_stores.h"
#include "reports/worst_report.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace {

// "1,2,4,8": each between 1 and 64.
Result<std::vector<int>> ParseConcurrencies(std::string_view text) {
  std::vector<int> out;
  for (const std::string& word : std::vector<std::string>(absl::StrSplit(std::string(text), ','))) {
    int n = 0;
    if (!absl::SimpleAtoi(word, &n) || n < 1 || n > 64) {
      return absl::InvalidArgumentError("'" + word +
                                        "' is not a concurrency (a whole number from 1 to 64; "
                                        "several comma-separated, e.g. 1,2,4,8)");
    }
    out.push_back(n);
  }
  return out;
}

class Worst final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "worst",
        "Search traffic (and interleavings and faults, when asked) for the largest breach of a "
        "claim: the most admitted in any W, the most over the bucket's B + span / T, or the "
        "longest run of false denials; print the worst case found as a witness, and how it "
        "grows with concurrency; exit 0 whatever it found (a measure, not a verdict: use check "
        "for that)");
    limiter_.Add(*c, "A protocol from ratelab list protocols (or give --lua)",
                 "Search your own Lua script instead of a protocol (with --model)");
    AddParsed(*c, "--measure", claim_, ParseWorstClaim,
              "What to push on: most-in-window (the most admitted in any W; the default for "
              "window algorithms), over-bucket (the most admitted over B + floor(span / T); the "
              "default for buckets) or false-denial-streak (the longest run of denials the model "
              "had room for)");
    AddParsed(*c, "--concurrency", concurrencies_, ParseConcurrencies,
              "The most requests in flight at once (as from that many clients, each waiting for "
              "its answer), comma-separated: a search at each, and how the worst grows with it "
              "(default 1,2,4,8)");
    AddParsed(*c, "--faults", faults_, ParseSearchFaults,
              "Comma-separated faults to inject too: crash, store-restart, clock-skew, "
              "store-outage, store-stall, store-failover (default none)");
    AddParsed(*c, "--runs", runs_, ParsePositiveInteger,
              "The most cases each search runs, its shrink included (default 3000)");
    AddParsed(*c, "--duration", time_, ParsePositiveDuration,
              "Stop each search after this long, with the worst found so far (the result then "
              "depends on the machine's speed; --runs alone does not)");
    AddParsed(*c, "--seed", seed_, ParseSeed, "The search's seed (default 1)");
    AddStoreOption(*c, store_, std::string(kStoreHelp) + " (default memory)");
    AddMaxTransitOption(*c, max_transit_);
    AddMaxSimulatedOption(*c, max_simulated_);
    c->add_flag("--json", json_, "Print the result as JSON");
    c->add_option("--junit", junit_,
                  "Also write the searches to this file as JUnit XML, for CI: a case per "
                  "concurrency, each skipped with what it measured (a measure, not a verdict), "
                  "an error where the limiter failed");
    out_.Add(*c);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<std::shared_ptr<const ProtocolInfo>> resolved = limiter_.Resolve();
    if (!resolved.ok()) return resolved.status();
    const std::shared_ptr<const ProtocolInfo> protocol = *std::move(resolved);
    Result<Policy> policy = limiter_.PolicyOf(*protocol);
    if (!policy.ok()) return policy.status();
    if (Status s = CheckCaseSize(*policy, max_simulated_); !s.ok()) return s;
    Result<std::optional<OutputDir>> out_dir = out_.Prepare();  // before the searches
    if (!out_dir.ok()) return out_dir.status();
    const CheckId claim = claim_.value_or(DefaultWorstClaim(*policy));
    if (claim == CheckId::kOverBucket && !policy->IsBucket()) {
      return absl::InvalidArgumentError(
          "--measure over-bucket needs a bucket algorithm (token-bucket, gcra, "
          "token-bucket-intervals); " +
          policy->ToString() + " is a window: use most-in-window");
    }

    const Duration max_transit = max_transit_.value_or(DefaultMaxTransit(*policy));
    WorstReport report{protocol->name,
                       policy->ToString(),
                       claim,
                       WorstBound(*policy, claim),
                       FormatDuration(max_transit),
                       {}};
    // One store for every search (a private server is started once).
    std::shared_ptr<StoreSource> stores;
    if (store_.kind != StoreName::Kind::kMemory) {
      Result<std::shared_ptr<StoreSource>> opened = OpenStoreSource(store_);
      if (!opened.ok()) return opened.status();
      stores = *std::move(opened);
    }
    const SystemClock clock;
    const InterruptHandler interrupts;
    bool failed = false;
    for (int concurrency : concurrencies_) {
      WorstOptions o;
      o.base.policy = *policy;
      o.base.max_transit = max_transit;
      o.claim = claim;
      o.faults = faults_;
      o.concurrency = concurrency;
      o.seed = seed_;
      o.runs = runs_;
      o.stores = stores;
      report.start = o.base.start;
      const Instant began = clock.Now();
      Instant last_said = began;
      Result<WorstResult> result = SearchWorst(protocol, o, [&](int64_t runs, int64_t best) {
        const Instant now = clock.Now();
        if (now - last_said >= std::chrono::seconds(2)) {
          err << "progress: concurrency " << concurrency << ", " << runs << "/" << runs_
              << " runs, worst so far " << best << "\n";
          last_said = now;
        }
        return !interrupts.interrupted() && !(time_ && now - began >= *time_);
      });
      if (!result.ok()) return result.status();
      char took[32];
      std::snprintf(took, sizeof took, "%.2f s",
                    std::chrono::duration<double>(clock.Now() - began).count());
      err << "concurrency " << concurrency << ": " << result->runs << " runs in " << took
          << ", worst " << result->value << " (first at run " << result->found_at_run << ")\n";
      failed = failed || result->failure.has_value();
      report.searches.push_back(MakeWorstSearch(o, *result, Reproduce(concurrency)));
      if (interrupts.interrupted()) break;
    }
    out << (json_ ? JsonText(ToJson(report)) : RenderWorstText(report));
    if (!junit_.empty()) {
      if (Status s = WriteTextFile(junit_, RenderWorstJunit(report)); !s.ok()) return s;
    }
    if (*out_dir) {
      if (Status s = SayReport(WriteWorstReport(report, **out_dir), err); !s.ok()) return s;
    }
    if (interrupts.interrupted()) return kExitInterrupted;
    return failed ? kExitLimiterFailed : kExitOk;
  }

 private:
  // The command that runs one of its searches again.
  std::string Reproduce(int concurrency) const {
    std::string out = "ratelab worst" + limiter_.Flags();
    if (claim_) out += " --measure " + std::string(CheckName(*claim_));
    out += " --concurrency " + std::to_string(concurrency);
    if (faults_ != SearchFaults{}) out += " --faults " + faults_.ToString();
    if (runs_ != kDefaultRuns) out += " --runs " + std::to_string(runs_);
    if (seed_ != 1) out += " --seed " + std::to_string(seed_);
    if (store_.kind != StoreName::Kind::kMemory) out += " --store " + store_.ToString();
    if (max_transit_) out += " --max-transit " + FormatDuration(*max_transit_);
    return out;
  }

  static constexpr int64_t kDefaultRuns = 3000;
  LimiterFlags limiter_{kDefaultPolicy};
  std::optional<CheckId> claim_;
  std::vector<int> concurrencies_ = {1, 2, 4, 8};
  SearchFaults faults_;
  int64_t runs_ = kDefaultRuns;
  std::optional<Duration> time_;
  uint64_t seed_ = 1;
  StoreName store_;
  std::optional<Duration> max_transit_;
  int64_t max_simulated_ = kDefaultMaxSimulated;
  bool json_ = false;
  std::string junit_;
  OptionalReportDir out_;
};

}  // namespace

std::unique_ptr<Command> WorstCommand() { return std::make_unique<Worst>(); }

}  // namespace ratelab
