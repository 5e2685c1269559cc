#include "sim/scenario_run.h"

#include <algorithm>
#include <memory>

#include "model/oracles.h"
#include "sim/fault_notes.h"
#include "sim/limiter_run.h"
#include "sim/store_source.h"
#include "sim/swarm.h"

namespace ratelab {

namespace {

constexpr uint64_t kTrafficStream = 2;
constexpr uint64_t kBuggifyStream = 3;
constexpr uint64_t kSwarmStream = 4;
constexpr uint64_t kRulesStream = 5;

// `faults` without its node crashes and store restarts.
std::vector<FaultSpec> WithoutRestarts(const std::vector<FaultSpec>& faults) {
  std::vector<FaultSpec> kept;
  for (const FaultSpec& f : faults) {
    if (f.kind != FaultSpec::Kind::kCrash && f.kind != FaultSpec::Kind::kStoreRestart &&
        f.kind != FaultSpec::Kind::kStoreFailover) {
      kept.push_back(f);
    }
  }
  return kept;
}

}  // namespace

int64_t LimiterOutcome::violation_count() const {
  int64_t n = 0;
  for (const CheckResult& c : checks) n += static_cast<int64_t>(c.violations.size());
  return n;
}

std::string LimiterOutcome::PolicyText() const {
  return by_rules ? "the scenario's rules" : policy.ToString();
}

const HistoryEvent* LimiterOutcome::FirstFailure() const {
  for (const HistoryEvent& e : history) {
    if (e.failed()) return &e;
  }
  return nullptr;
}

int64_t RunResult::failure_count() const {
  int64_t n = 0;
  for (const LimiterOutcome& o : limiters) n += o.failed;
  return n;
}

int64_t RunResult::violation_count() const {
  int64_t n = 0;
  for (const LimiterOutcome& o : limiters) n += o.violation_count();
  return n;
}

uint64_t RunResult::history_hash() const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const LimiterOutcome& o : limiters) h = (h ^ o.history_hash()) * 0x100000001b3ULL;
  return h;
}

double RequestBytes(double key_bytes) {
  return kRequestBytes +
         kRequestBytesPerKeyByte * std::max(0.0, key_bytes - TrafficGenerator::kTypicalKeyBytes);
}

Status CheckRunSize(const Scenario& scenario, int64_t max_simulated) {
  const double arrivals = ExpectedCount(scenario.traffic);
  const double requests = arrivals * static_cast<double>(scenario.limiters.size());
  if (requests <= static_cast<double>(max_simulated)) return absl::OkStatus();
  const auto whole = [](double n) { return std::to_string(static_cast<uint64_t>(n)); };
  const double each = RequestBytes(ExpectedKeyBytes(scenario.traffic));
  char gb[32];
  std::snprintf(gb, sizeof gb, "%.1f", requests * each / 1e9);
  return absl::InvalidArgumentError(
      "this run would simulate about " + whole(requests) + " requests (" + whole(arrivals) +
      " arrivals for each of " + std::to_string(scenario.limiters.size()) +
      " limiters), over --max-simulated " + std::to_string(max_simulated) + " (each costs about " +
      whole(each) + " bytes of memory with this traffic's keys, about " + gb +
      " GB in all); make the traffic smaller (its count, per_side, duration or gaps) or raise "
      "--max-simulated");
}

Result<RunResult> RunScenario(const Scenario& scenario, uint64_t seed,
                              const RunProgress& progress) {
  const Random root(seed);
  const std::vector<Arrival> arrivals = GenerateAll(scenario.traffic, root.Fork(kTrafficStream));

  SimulationConfig config;
  config.seed = seed;
  config.start = scenario.start;
  config.nodes = scenario.nodes;
  config.to_store = scenario.to_store;
  config.from_store = scenario.from_store;
  config.buggify.enabled =
      scenario.buggify == Scenario::BuggifyMode::kOn ||
      (scenario.buggify == Scenario::BuggifyMode::kAuto && root.Fork(kBuggifyStream).Chance(0.5));
  config.buggify.max_delay = scenario.buggify_max_delay.value_or(
      std::max(Duration(std::chrono::milliseconds(1)),
               10 * (scenario.to_store.base + scenario.to_store.jitter)));

  RunResult c{scenario.name,
              scenario.description,
              seed,
              scenario.start,
              config.buggify.enabled,
              scenario.utc_offset,
              {},
              scenario.claim_limit,
              scenario.claim_window,
              scenario.claim_given,
              {},
              {},
              {}};
  for (const auto& g : scenario.traffic) c.traffic.push_back(g->Describe());

  // Where the limiters keep their state: MemoryKv unless the scenario says otherwise.
  if (!scenario.stores && scenario.store.kind != StoreName::Kind::kMemory) {
    return absl::FailedPreconditionError("the scenario's store, " + scenario.store.ToString() +
                                         ", was not opened (live/server_stores.h)");
  }
  const std::shared_ptr<StoreSource> stores = scenario.stores ? scenario.stores : MemoryStores();
  StoreSource& kv_source = *stores;
  if (Status s = CheckStoreIsUsed(scenario, kv_source.name()); !s.ok()) return s;
  bool has_store = false, has_kv = false, has_sql = false;
  for (const LimiterSpec& spec : scenario.limiters) {
    const ProtocolInfo* info = spec.Info();
    if (info != nullptr && info->needs_replica && !kv_source.memory()) {
      return absl::InvalidArgumentError(
          spec.DisplayName() + " waits for a replica (WAIT), and the store " + kv_source.where() +
          " has none: run it on the in-memory store (store: memory), whose replica is modelled");
    }
    has_store = has_store || (info != nullptr && info->store != StoreKind::kMemory);
    has_kv = has_kv || (info != nullptr && info->store == StoreKind::kKv);
    has_sql = has_sql || (info != nullptr && info->store == StoreKind::kSql);
  }
  // A server ratelab did not start cannot be restarted by it.
  const bool can_restart_store =
      kv_source.owns_server() ||
      ((kv_source.memory() || !has_kv) &&
       (!has_sql || kv_source.name().kind != StoreName::Kind::kPostgresUrl));
  std::vector<FaultSpec> faults = scenario.faults;
  if (scenario.swarm) {
    const Duration span = arrivals.empty() ? Duration(0) : arrivals.back().at - scenario.start;
    for (const FaultSpec& f : SwarmFaults(root.Fork(kSwarmStream), scenario, span, has_store)) {
      // A server ratelab does not own cannot be restarted.
      if (f.kind == FaultSpec::Kind::kStoreRestart && !can_restart_store) continue;
      faults.push_back(f);
    }
  }
  for (const FaultSpec& f : scenario.faults) {
    if (f.kind == FaultSpec::Kind::kStoreRestart && !can_restart_store) {
      return absl::InvalidArgumentError(
          "a store-restart fault needs a server that ratelab starts (store redis or postgres): it "
          "cannot restart the one at " +
          kv_source.where());
    }
  }
  // The note is about the kv protocols' server, or (PostgreSQL) the SQL protocols'.
  if ((kv_source.sql() ? has_sql : has_kv) && !kv_source.Note().empty()) {
    c.notes.push_back(kv_source.Note());
  }
  std::vector<FaultWindow> restarts;
  for (const FaultSpec& f : faults) {
    const Instant at = scenario.start + f.at;
    c.faults.push_back({f.Describe(scenario.start), at,
                        f.kind == FaultSpec::Kind::kClockJump ? at : at + f.amount});
    if (f.kind == FaultSpec::Kind::kCrash || f.kind == FaultSpec::Kind::kStoreRestart ||
        f.kind == FaultSpec::Kind::kStoreFailover) {
      restarts.push_back(c.faults.back());
    }
  }
  for (std::string& note : FaultNotes(scenario, faults, kv_source))
    c.notes.push_back(std::move(note));
  // When each node learned each rule change: the same for every limiter.
  std::optional<RulePlan> rules;
  if (scenario.rules) {
    std::vector<DeafSpan> deaf;
    for (const FaultSpec& f : faults) {
      if (f.kind == FaultSpec::Kind::kListenDown || f.kind == FaultSpec::Kind::kCrash) {
        deaf.push_back({f.node, scenario.start + f.at, scenario.start + f.at + f.amount});
      }
    }
    rules = RulePlan::Make(*scenario.rules, scenario.start, static_cast<int>(scenario.nodes.size()),
                           deaf, root.Fork(kRulesStream));
    const Instant end = arrivals.empty() ? scenario.start : arrivals.back().at;
    for (std::string& note : PropagationNotes(*rules, end)) c.notes.push_back(std::move(note));
    if (const int64_t unruled = CountUnruled(*rules, arrivals); unruled > 0) {
      c.notes.push_back(std::to_string(unruled) + " of " + std::to_string(arrivals.size()) +
                        " requests matched no rule, and a limiter by rules admits those without "
                        "a limit (a rule for endpoint \"*\" covers every endpoint)");
    }
  }
  const RulePlan* plan = rules ? &*rules : nullptr;

  // The decision API takes no cost: a limiter via http would spend 1 where the history says more.
  for (const LimiterSpec& spec : scenario.limiters) {
    if (!spec.via_http) continue;
    for (const Arrival& a : arrivals) {
      if (a.cost != 1) {
        return absl::InvalidArgumentError("the decision API takes no cost, so " +
                                          spec.DisplayName() + " cannot take the request of user " +
                                          a.user + " at " + FormatInstant(a.at) + ", which costs " +
                                          std::to_string(a.cost));
      }
    }
  }
  for (const LimiterSpec& spec : scenario.limiters) {
    if (progress) progress(spec.DisplayName(), c.limiters.size(), scenario.limiters.size());
    // Scenarios built in code have not been through the reader's checks.
    if (Status s = spec.Check(); !s.ok()) return s;
    LimiterRun run(config, spec, faults, arrivals, kv_source, plan, scenario.keep_lapses);
    if (!run.status().ok()) return run.status();
    LimiterOutcome o;
    o.name = spec.DisplayName();
    o.protocol =
        spec.by_rules && spec.protocol.empty() ? "memory-<each rule's algorithm>" : spec.protocol;
    o.policy = spec.policy;
    o.by_rules = spec.by_rules;
    o.history = run.history();
    o.state = run.State();
    o.lapses = run.Lapses();
    o.offered = static_cast<int64_t>(o.history.size());
    for (const HistoryEvent& e : o.history) {
      o.admitted += e.admitted();
      o.denied += e.denied();
      o.unanswered += e.unanswered();
      o.failed += e.failed();
    }
    // Judged as the protocol decided: at its own time resolution (no alarm for what it cannot
    // see), on its own clock.
    const Duration resolution = spec.Info()->time_resolution;
    const DecisionClock clock = spec.Info()->clock;
    const bool retimed =
        resolution > Duration(1) || clock == DecisionClock::kStore || DelaysAdmissions(o.history);
    const History judged = retimed ? AsDecided(o.history, clock, resolution) : History{};
    const History& h = retimed ? judged : o.history;
    const AnyWindowReport any = CheckAnyWindowCap(h, c.limit, c.window);
    o.max_in_any_window = any.max_in_any_window;
    const bool wants_expiry = std::find(scenario.checks.begin(), scenario.checks.end(),
                                        CheckId::kKeyExpiry) != scenario.checks.end();
    const std::vector<NeverFreed> never_expire =
        wants_expiry ? run.NeverExpire() : std::vector<NeverFreed>{};
    const std::function<Result<History>()> without_restarts = [&]() -> Result<History> {
      LimiterRun calm(config, spec, WithoutRestarts(faults), arrivals, kv_source, plan);
      if (!calm.status().ok()) return calm.status();
      return AsDecided(calm.history(), clock, resolution);
    };
    const Judged judged_run{
        .history = h,
        .policy = spec.policy,
        .claim_limit = c.limit,
        .claim_window = c.window,
        .any_window = any,
        .never_expire = never_expire,
        .restarts = restarts,
        .without_restarts = without_restarts,
        .retry_after_unit = spec.via_http ? Duration(std::chrono::seconds(1)) : Duration(1),
        .wait_unit = spec.Info()->wait_unit,
        .resolution = std::max(Duration(1), resolution),
        .tie = spec.Info()->tie(),
        // The same before its instants were floored: which ties the floor made.
        .exact = resolution > Duration(1) ? std::function<History()>([&] {
          return AsDecided(o.history, clock, Duration(1));
        })
                                          : nullptr};
    for (CheckId check : scenario.checks) {
      Result<std::vector<Violation>> violations = CheckOf(check).judge(judged_run);
      if (!violations.ok()) return violations.status();
      for (Violation& v : *violations) SetGrid(v, spec.policy);
      o.checks.push_back({check, *std::move(violations)});
    }
    if (plan != nullptr && spec.by_rules && plan->change_count() > 0) {
      c.notes.push_back(
          StaleDecisionsNote(o.name, CountStaleDecisions(*plan, arrivals, o.history)));
    }
    c.limiters.push_back(std::move(o));
  }
  return c;
}

}  // namespace ratelab
