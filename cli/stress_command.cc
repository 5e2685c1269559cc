#include "cli/stress_command.h"

#include <CLI/CLI.hpp>

#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/limiter_flags.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "live/stress_run.h"
#include "reports/stress_report.h"

namespace ratelab {

namespace {

// A duration the parser reads ("3s", "1m").
Result<Duration> ParseAnyDuration(std::string_view text) {
  if (std::optional<Duration> d = ParseDuration(text)) return *d;
  return absl::InvalidArgumentError("'" + std::string(text) + "' is not a duration (e.g. 3s, 1m)");
}

class Stress final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "stress",
        "Real concurrency: threads, each a limiter process with its own connection, send "
        "requests to the protocol's store as fast as it answers: a real Redis or PostgreSQL, or "
        "the in-memory store they share (an in-process protocol: one instance they all call; "
        "with --exec, the one limiter in your process, at the wall clock's instants); the "
        "promise is judged on "
        "the wall-clock history (a decision took effect somewhere between sent and answered), "
        "and whether the answers are linearizable (some order of the requests gives every "
        "admission and denial the model gives); exit 1 when either fails");
    limiter_.Add(*c, "A protocol (ratelab list protocols), or give --lua",
                 "Stress your own Lua script instead of a protocol (with --model)");
    store_option_ = AddStoreOption(
        *c, plan_.store,
        "redis (a private redis-server that ratelab starts and stops; the default), or "
        "the URL of a running Redis, redis://host:port/db or unix:///path.sock?db=N, "
        "or of a Redis Cluster, redis-cluster://host:port[,host:port...] (its "
        "database must be empty; ratelab empties it after the run); for a SQL "
        "protocol, postgres (a private PostgreSQL server; its default) or a "
        "postgresql:// URL; memory (in process: an in-process protocol's one instance, or "
        "a MemoryKv and MemoryDocs every thread shares on the wall clock, each command run "
        "whole, as a single-threaded server runs it; the default for the in-process and "
        "document protocols)");
    c->add_option("--threads", plan_.threads, "Threads sending at once")->capture_default_str();
    AddParsed(*c, "--duration", plan_.duration, ParseAnyDuration,
              "How long they send, e.g. 3s, 1m (default 3s, at most 1h)");
    c->add_option("--users", plan_.users,
                  "Users whose keys the requests go round (fewer users, more contention)")
        ->capture_default_str();
    c->add_flag("--json", json_, "Print the result as JSON");
    AddJunitOption(*c, junit_);
    out_.Add(*c);
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    Result<std::shared_ptr<const ProtocolInfo>> protocol = limiter_.Resolve();
    if (!protocol.ok()) return protocol.status();
    plan_.protocol = *std::move(protocol);
    if (plan_.protocol->IsProcess() && store_option_->count() > 0) {
      return absl::InvalidArgumentError("--store: " + plan_.protocol->name +
                                        " keeps its state in its own process");
    }
    if (store_option_->count() == 0) plan_.store = DefaultStore(plan_.protocol->store);
    if (Status s = CheckStressPlan(plan_); !s.ok()) return s;  // before its policy is read
    Result<Policy> policy = limiter_.PolicyOf(*plan_.protocol);
    if (!policy.ok()) return policy.status();
    plan_.policy = *policy;
    Result<std::optional<OutputDir>> out_dir = out_.Prepare();  // before the load
    if (!out_dir.ok()) return out_dir.status();

    err << "stress " << plan_.protocol->name << " (" << plan_.policy.ToString() << ") on "
        << (plan_.protocol->IsProcess() ? "its own process" : plan_.store.Describe()) << ": "
        << plan_.threads << " threads, " << plan_.users << " user(s), "
        << FormatDuration(plan_.duration) << "\n";
    const SystemClock clock;
    const InterruptHandler interrupts;
    Result<StressResult> result = RunStress(
        plan_, clock,
        [&](Duration elapsed, int64_t answered) {
          err << "progress: " << FormatDuration(elapsed) << ", " << answered << " answered\n";
        },
        [&] { return interrupts.interrupted(); });
    if (!result.ok()) return result.status();
    if (result->interrupted) {
      err << "interrupted after " << FormatDuration(result->elapsed)
          << ": what was measured until then, judged\n";
    }
    if (result->stopped_at_cap) {
      err << "note: stopped after " << kStressMaxRequests
          << " requests, the most a run records; give a shorter --duration\n";
    }
    const StressReport report = MakeStressReport(plan_, *result);
    out << (json_ ? JsonText(ToJson(report)) : RenderStressText(report));
    if (!junit_.empty()) {
      if (Status s = WriteTextFile(junit_, RenderStressJunit(report)); !s.ok()) return s;
    }
    if (*out_dir) {
      if (Status s = SayReport(WriteStressReport(report, **out_dir), err); !s.ok()) return s;
    }
    if (result->interrupted) return kExitInterrupted;
    return ExitOf(VerdictOf(report));
  }

 private:
  // Where a protocol that keeps its state in a `kind` of store runs unless told: a private
  // redis-server for a kv protocol, a private PostgreSQL server for a SQL one, in process for the
  // rest.
  static StoreName DefaultStore(StoreKind kind) {
    switch (kind) {
      case StoreKind::kKv:
        return StoreName{StoreName::Kind::kPrivateRedis, ""};
      case StoreKind::kSql:
        return StoreName{StoreName::Kind::kPrivatePostgres, ""};
      case StoreKind::kMemory:
      case StoreKind::kDocs:
        break;
    }
    return StoreName{};
  }

  LimiterFlags limiter_{kDefaultPolicy};
  StressPlan plan_;
  CLI::Option* store_option_ = nullptr;
  bool json_ = false;
  std::string junit_;
  OptionalReportDir out_;
};

}  // namespace

std::unique_ptr<Command> StressCommand() { return std::make_unique<Stress>(); }

}  // namespace ratelab
