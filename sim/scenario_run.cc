#include "sim/scenario_run.h"

#include <algorithm>
#include <memory>

#include "judge/oracles.h"
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
    if (f.kind != FaultKind::kCrash && f.kind != FaultKind::kStoreRestart &&
        f.kind != FaultKind::kStoreFailover) {
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

namespace {

// What one run of a scenario shares between its limiters: the same traffic, faults, store and
// rules for each.
struct RunPlan {
  const Scenario& scenario;
  SimulationConfig config;
  std::vector<Arrival> arrivals;
  StoreSource& store;
  std::vector<FaultSpec> faults = {};      // the scenario's, and a swarm's
  std::vector<FaultWindow> restarts = {};  // of those, the ones that lose state
  std::optional<RulePlan> rules = {};      // when each node learned each rule change
  const RulePlan* plan() const { return rules ? &*rules : nullptr; }
};

// The simulation's settings for `seed`: the scenario's nodes and legs, BUGGIFY on, off or drawn.
SimulationConfig ConfigOf(const Scenario& scenario, uint64_t seed, const Random& root) {
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
  return config;
}

// What the scenario's limiters ask of its store.
struct StoreUse {
  bool any = false;  // a limiter keeps its state in a store
  bool kv = false;
  bool sql = false;
  // A restart loses nothing ratelab cannot restart: it owns the server, or none is used.
  bool can_restart = false;
};

// What the limiters ask of `store`; InvalidArgument for one that waits for a replica it lacks.
Result<StoreUse> UseOf(const Scenario& scenario, const StoreSource& store) {
  StoreUse use;
  for (const LimiterSpec& spec : scenario.limiters) {
    const ProtocolInfo* info = spec.Info();
    if (info != nullptr && info->needs_replica && !store.memory()) {
      return absl::InvalidArgumentError(
          spec.DisplayName() + " waits for a replica (WAIT), and the store " + store.where() +
          " has none: run it on the in-memory store (store: memory), whose replica is modelled");
    }
    use.any = use.any || (info != nullptr && info->store != StoreKind::kMemory);
    use.kv = use.kv || (info != nullptr && info->store == StoreKind::kKv);
    use.sql = use.sql || (info != nullptr && info->store == StoreKind::kSql);
  }
  // A server ratelab did not start cannot be restarted by it.
  use.can_restart = store.name().CanRestart(use.kv, use.sql);
  return use;
}

// The scenario's faults, and a swarm's drawn beside them (no store restart where none can be);
// InvalidArgument for a scenario's store restart that cannot be.
Result<std::vector<FaultSpec>> FaultsOf(const Scenario& scenario, const Random& root,
                                        const std::vector<Arrival>& arrivals, const StoreUse& use,
                                        const StoreSource& store) {
  for (const FaultSpec& f : scenario.faults) {
    if (f.kind == FaultKind::kStoreRestart && !use.can_restart) {
      return absl::InvalidArgumentError(
          "a store-restart fault needs a server that ratelab starts (store redis or postgres): it "
          "cannot restart the one at " +
          store.where());
    }
  }
  std::vector<FaultSpec> faults = scenario.faults;
  if (scenario.swarm) {
    const Duration span = arrivals.empty() ? Duration(0) : arrivals.back().at - scenario.start;
    for (const FaultSpec& f : SwarmFaults(root.Fork(kSwarmStream), scenario, span, use.any)) {
      if (f.kind == FaultKind::kStoreRestart && !use.can_restart) continue;
      faults.push_back(f);
    }
  }
  return faults;
}

// The faults as the report shows them (into `shown`); the ones that lose state.
std::vector<FaultWindow> ShowFaults(const Scenario& scenario, const std::vector<FaultSpec>& faults,
                                    std::vector<FaultWindow>& shown) {
  std::vector<FaultWindow> restarts;
  for (const FaultSpec& f : faults) {
    const Instant at = scenario.start + f.at;
    shown.push_back(
        {f.Describe(scenario.start), at, f.kind == FaultKind::kClockJump ? at : at + f.amount});
    if (f.kind == FaultKind::kCrash || f.kind == FaultKind::kStoreRestart ||
        f.kind == FaultKind::kStoreFailover) {
      restarts.push_back(shown.back());
    }
  }
  return restarts;
}

// When each node learned each rule change (none without rules), and what to note of it.
std::optional<RulePlan> PlanRules(const Scenario& scenario, const std::vector<FaultSpec>& faults,
                                  const std::vector<Arrival>& arrivals, const Random& root,
                                  std::vector<std::string>& notes) {
  if (!scenario.rules) return std::nullopt;
  std::vector<DeafSpan> deaf;
  for (const FaultSpec& f : faults) {
    if (f.kind == FaultKind::kListenDown || f.kind == FaultKind::kCrash) {
      deaf.push_back({f.node, scenario.start + f.at, scenario.start + f.at + f.amount});
    }
  }
  RulePlan rules =
      RulePlan::Make(*scenario.rules, scenario.start, static_cast<int>(scenario.nodes.size()), deaf,
                     root.Fork(kRulesStream));
  const Instant end = arrivals.empty() ? scenario.start : arrivals.back().at;
  for (std::string& note : PropagationNotes(rules, end)) notes.push_back(std::move(note));
  if (const int64_t unruled = CountUnruled(rules, arrivals); unruled > 0) {
    notes.push_back(std::to_string(unruled) + " of " + std::to_string(arrivals.size()) +
                    " requests matched no rule, and a limiter by rules admits those without "
                    "a limit (a rule for endpoint \"*\" covers every endpoint)");
  }
  return rules;
}

// InvalidArgument when a limiter reached through the decision API, which takes no cost, would be
// sent a request that costs more than 1 (it would spend 1 where the history says more).
Status CheckCostsReachEveryLimiter(const Scenario& scenario, const std::vector<Arrival>& arrivals) {
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
  return absl::OkStatus();
}

// What `run` of `spec` did: its history, state and counts.
LimiterOutcome OutcomeOf(const LimiterSpec& spec, LimiterRun& run) {
  LimiterOutcome o;
  o.name = spec.DisplayName();
  o.protocol = spec.protocol ? spec.protocol->name : "memory-<each rule's algorithm>";
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
  return o;
}

// Judges `o`, the outcome of `run` of `spec`, by each of the scenario's checks and the claim
// (`limit` in any `window`), as the protocol decided: at its own time resolution (no alarm for
// what it cannot see), on its own clock.
Status Judge(const RunPlan& p, const LimiterSpec& spec, LimiterRun& run, int64_t limit,
             Duration window, LimiterOutcome& o) {
  const Duration resolution = spec.Info()->time_resolution;
  const DecisionClock clock = spec.Info()->clock;
  const bool retimed =
      resolution > Duration(1) || clock == DecisionClock::kStore || DelaysAdmissions(o.history);
  const History judged = retimed ? AsDecided(o.history, clock, resolution) : History{};
  const History& h = retimed ? judged : o.history;
  const AnyWindowReport any = CheckAnyWindowCap(h, limit, window);
  o.max_in_any_window = any.max_in_any_window;
  const std::vector<CheckId>& checks = p.scenario.checks;
  const bool wants_expiry =
      std::find(checks.begin(), checks.end(), CheckId::kKeyExpiry) != checks.end();
  const std::vector<NeverFreed> never_expire =
      wants_expiry ? run.NeverExpire() : std::vector<NeverFreed>{};
  const std::function<Result<History>()> without_restarts = [&]() -> Result<History> {
    LimiterRun calm(p.config, spec, WithoutRestarts(p.faults), p.arrivals, p.store, p.plan());
    if (!calm.status().ok()) return calm.status();
    return AsDecided(calm.history(), clock, resolution);
  };
  const Judged judged_run{
      .history = h,
      .policy = spec.policy,
      .claim_limit = limit,
      .claim_window = window,
      .any_window = any,
      .never_expire = never_expire,
      .restarts = p.restarts,
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
  for (CheckId check : checks) {
    Result<std::vector<Violation>> violations = CheckOf(check).judge(judged_run);
    if (!violations.ok()) return violations.status();
    for (Violation& v : *violations) SetGrid(v, spec.policy);
    o.checks.push_back({check, *std::move(violations)});
  }
  return absl::OkStatus();
}

}  // namespace

Result<RunResult> RunScenario(const Scenario& scenario, uint64_t seed,
                              const RunProgress& progress) {
  const Random root(seed);
  // Where the limiters keep their state: MemoryKv unless the scenario says otherwise.
  if (!scenario.stores && scenario.store.kind != StoreName::Kind::kMemory) {
    return absl::FailedPreconditionError("the scenario's store, " + scenario.store.ToString() +
                                         ", was not opened (live/server_stores.h)");
  }
  const std::shared_ptr<StoreSource> stores = scenario.stores ? scenario.stores : MemoryStores();
  RunPlan p{scenario, ConfigOf(scenario, seed, root),
            GenerateAll(scenario.traffic, root.Fork(kTrafficStream)), *stores};

  RunResult c{scenario.name,
              scenario.description,
              seed,
              scenario.start,
              p.config.buggify.enabled,
              scenario.utc_offset,
              {},
              scenario.claim_limit,
              scenario.claim_window,
              scenario.claim_given,
              {},
              {},
              {}};
  for (const auto& g : scenario.traffic) c.traffic.push_back(g->Describe());

  if (Status s = CheckStoreIsUsed(scenario, p.store.name()); !s.ok()) return s;
  Result<StoreUse> use = UseOf(scenario, p.store);
  if (!use.ok()) return use.status();
  Result<std::vector<FaultSpec>> faults = FaultsOf(scenario, root, p.arrivals, *use, p.store);
  if (!faults.ok()) return faults.status();
  p.faults = *std::move(faults);
  // The note is about the kv protocols' server, or (PostgreSQL) the SQL protocols'.
  if ((p.store.sql() ? use->sql : use->kv) && !p.store.Note().empty()) {
    c.notes.push_back(p.store.Note());
  }
  p.restarts = ShowFaults(scenario, p.faults, c.faults);
  for (std::string& note : FaultNotes(scenario, p.faults, p.store)) {
    c.notes.push_back(std::move(note));
  }
  p.rules = PlanRules(scenario, p.faults, p.arrivals, root, c.notes);
  if (Status s = CheckCostsReachEveryLimiter(scenario, p.arrivals); !s.ok()) return s;

  for (const LimiterSpec& spec : scenario.limiters) {
    if (progress) progress(spec.DisplayName(), c.limiters.size(), scenario.limiters.size());
    // Scenarios built in code have not been through the reader's checks.
    if (Status s = spec.Check(); !s.ok()) return s;
    LimiterRun run(p.config, spec, p.faults, p.arrivals, p.store, p.plan(), scenario.keep_lapses);
    if (!run.status().ok()) return run.status();
    LimiterOutcome o = OutcomeOf(spec, run);
    if (Status s = Judge(p, spec, run, c.limit, c.window, o); !s.ok()) return s;
    if (p.plan() != nullptr && spec.by_rules && p.plan()->change_count() > 0) {
      c.notes.push_back(
          StaleDecisionsNote(o.name, CountStaleDecisions(*p.plan(), p.arrivals, o.history)));
    }
    c.limiters.push_back(std::move(o));
  }
  return c;
}

}  // namespace ratelab
