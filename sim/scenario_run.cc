#include "sim/scenario_run.h"

#include <algorithm>
#include <memory>
#include <set>

#include "impl/limiters/failure_policy.h"
#include "impl/store/memory_docs.h"
#include "impl/store/memory_kv.h"
#include "model/oracles.h"
#include "sim/faulty_stores.h"
#include "sim/kv_backend.h"
#include "sim/simulation.h"
#include "sim/swarm.h"

namespace ratelab {

namespace {

constexpr uint64_t kTrafficStream = 2;
constexpr uint64_t kBuggifyStream = 3;
constexpr uint64_t kSwarmStream = 4;

// The stores one limiter runs on, and the link its nodes reach them by. A limiter that keeps
// no kv state gets an (unused) MemoryKv rather than a real server. `status` says why the kv
// store could not be had; nothing else is usable then.
struct RunStores {
  RunStores(const Clock& clock, Durability durability, KvStoreSource& source, bool uses_kv)
      : docs(clock, durability) {
    Result<std::unique_ptr<KvBackend>> opened =
        uses_kv ? source.Open(clock, durability) : OpenMemoryKv(clock, durability);
    if (!opened.ok()) {
      status = opened.status();
      return;
    }
    kv = *std::move(opened);
    faulty_kv = std::make_unique<FaultyKv>(*kv, link);
  }
  void Restart() {
    kv->Restart();
    docs.Restart();
  }
  StateSize Usage() {
    StateSize s = kv->Usage();
    s += docs.Usage();
    return s;
  }

  Status status;
  std::unique_ptr<KvBackend> kv;
  MemoryDocs docs;
  StoreLink link;
  std::unique_ptr<FaultyKv> faulty_kv;
  FaultyDocs faulty_docs{docs, link};
};

// "key-expiry": every key (or document) a protocol leaves in its store must expire. One
// violation per key without an expiry at the end of the run, witnessed by the requests whose
// steps named it (for a document: named all its string fields).
std::vector<Violation> KeysThatNeverExpire(RunStores& stores, const History& h) {
  std::vector<MemoryDocs::Immortal> immortal;
  for (const std::string& key : stores.kv->KeysWithoutExpiry()) {
    immortal.push_back({"store key " + key, "no TTL", {key}});
  }
  for (MemoryDocs::Immortal& doc : stores.docs.DocumentsWithoutExpiry()) {
    doc.name = "document " + doc.name;
    immortal.push_back(std::move(doc));
  }
  std::vector<Violation> out;
  for (const MemoryDocs::Immortal& item : immortal) {
    Violation v{"key-expiry",
                item.name,
                item.name + " has no expiry (" + item.why + "): nothing will ever free it",
                {}};
    const auto names_it = [&](const std::string& label) {
      return std::all_of(item.fields.begin(), item.fields.end(),
                         [&](const std::string& f) { return label.find(f) != std::string::npos; });
    };
    for (const HistoryEvent& e : h) {
      if (std::any_of(e.steps.begin(), e.steps.end(),
                      [&](const StepRecord& s) { return names_it(s.label); })) {
        v.witness.push_back(e);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// "survives-restart": the promise's violations whose witness spans a restart (its first request
// came before it, its last after): what a restart reset. `restarts` are the node crashes and
// store restarts of the run.
std::vector<Violation> BrokenByRestarts(const History& h, const Policy& own,
                                        const std::vector<FaultWindow>& restarts) {
  std::vector<Violation> out;
  for (Violation& v : CheckPromise(h, own)) {
    Instant first = Instant::max(), last = Instant::min();
    for (const HistoryEvent& e : v.witness) {
      first = std::min(first, e.invoke);
      last = std::max(last, e.invoke);
    }
    for (const FaultWindow& r : restarts) {
      if (first < r.from && r.from <= last) {
        v.summary += "; across the restart: " + r.what;
        v.invariant = "survives-restart";
        out.push_back(std::move(v));
        break;
      }
    }
  }
  return out;
}

// Runs check `name` (all but survives-restart, which needs a second run). `any_window` is the
// any-window report for the claim, computed once per history; `stores` are the limiter's.
std::vector<Violation> Check(const std::string& name, const History& h, const Policy& own,
                             int64_t claim_limit, Duration claim_window,
                             const AnyWindowReport& any_window, RunStores& stores) {
  if (name == "key-expiry") return KeysThatNeverExpire(stores, h);
  if (name == "promise") return CheckPromise(h, own);
  if (name == "any-window-cap") return any_window.violations;
  if (name == "aligned-window-cap") return CheckAlignedWindowCap(h, claim_limit, claim_window);
  if (name == "anchored-window-cap") return CheckAnchoredWindowCap(h, claim_limit, claim_window);
  if (name == "bucket-conformance") {
    return own.IsBucket() ? CheckBucketConformance(h, own.limit, own.window)
                          : std::vector<Violation>{};
  }
  if (name == "false-denials") return CheckFalseDenials(h, own);
  if (name == "retry-after") return CheckRetryAfter(h, own);
  return {};
}

// What a reader must know about each fault to read the verdicts.
void AddFaultNotes(const Scenario& scenario, const std::vector<FaultSpec>& faults,
                   const KvStoreSource& kv_source, std::vector<std::string>& notes) {
  for (const FaultSpec& f : faults) {
    const std::string what = f.Describe(scenario.start);
    for (const LimiterSpec& spec : scenario.limiters) {
      const ProtocolInfo* info = spec.Info();
      const bool in_process = info == nullptr || info->store == "memory";
      std::string note;
      switch (f.kind) {
        case FaultSpec::Kind::kCrash:
          note = in_process ? "keeps its counts in process memory, so the restart forgot them"
                            : "keeps its counts in the store, so the restart kept them";
          break;
        case FaultSpec::Kind::kStoreRestart:
          if (in_process) break;
          switch (spec.durability) {
            case Durability::kNone:
              note = "runs on a store without persistence (durability none): every count was lost";
              break;
            case Durability::kEverySec:
              note = kv_source.memory() || info->store != "kv"
                         ? "runs on a store fsyncing every second: the last second's counts were "
                           "lost"
                         : "runs on a redis-server fsyncing every second: the kill -9 kept what "
                           "Redis had written to its file, but not writes it held back while an "
                           "fsync ran, so what was lost depends on the machine's timing and is not "
                           "reproducible from the seed";
              break;
            case Durability::kAlways:
              note = "runs on a store fsyncing every write (durability always): no count was lost";
              break;
          }
          break;
        case FaultSpec::Kind::kStoreOutage:
          if (in_process) break;
          note = std::string("cannot reach its store; on a store error it does: ") +
                 std::string(FailurePolicyName(spec.on_store_error.kind));
          break;
        case FaultSpec::Kind::kClockJump:
        case FaultSpec::Kind::kLatencySpike:
          break;
      }
      if (!note.empty()) notes.push_back(what + ": " + spec.DisplayName() + " " + note);
    }
  }
}

// One limiter's simulation from start to end: its stores, the simulation with `faults`
// scheduled, and the history it made.
struct LimiterRun {
  LimiterRun(const SimulationConfig& config, const LimiterSpec& spec,
             const std::vector<FaultSpec>& faults, Instant start,
             const std::vector<Arrival>& arrivals, KvStoreSource& kv_source)
      : sim(config, nullptr),
        stores(sim.clock(), spec.durability, kv_source, spec.Info()->store == "kv") {
    if (!stores.status.ok()) {
      status = stores.status;
      return;
    }
    handles.kv = stores.faulty_kv.get();
    sim.SetFactory([this, &spec](int) {
      std::unique_ptr<Protocol> p = *spec.Make(handles);
      if (spec.on_store_error.kind == FailurePolicy::Kind::kError) return p;
      return std::unique_ptr<Protocol>(
          std::make_unique<GuardedProtocol>(std::move(p), spec.policy, spec.on_store_error));
    });
    for (const FaultSpec& f : faults) {
      const Instant at = start + f.at;
      switch (f.kind) {
        case FaultSpec::Kind::kCrash:
          sim.CrashNode(f.node, at, f.amount);
          break;
        case FaultSpec::Kind::kClockJump:
          sim.JumpClock(f.node, at, f.amount);
          break;
        case FaultSpec::Kind::kLatencySpike:
          sim.LatencySpike(at, f.amount, f.extra);
          break;
        case FaultSpec::Kind::kStoreOutage:
          sim.At(at, [this] { stores.link.Down(); });
          sim.At(at + f.amount, [this] { stores.link.Up(); });
          break;
        case FaultSpec::Kind::kStoreRestart:
          sim.At(at, [this] {
            stores.link.Down();
            stores.Restart();
          });
          sim.At(at + f.amount, [this] { stores.link.Up(); });
          break;
      }
    }
    history = sim.Run(arrivals);
    status = stores.kv->failure();
  }

  Simulation sim;
  RunStores stores;
  Stores handles{nullptr, &stores.faulty_docs};
  History history;
  // Not OK when the kv store could not be had, or failed (not by a simulated fault) during the
  // run: the history is then worthless.
  Status status;
};

}  // namespace

Result<std::unique_ptr<Protocol>> LimiterSpec::Make(const Stores& stores) const {
  if (!custom) return MakeProtocol(protocol, policy, stores);
  return custom->make(policy, stores);
}

std::vector<CheckInfo> Checks() {
  std::vector<CheckInfo> out = {
      {"promise", "what the limiter's own algorithm promises (its window cap, or conformance)"}};
  for (const OracleInfo& o : Oracles()) {
    if (o.name != "boundary-burst") out.push_back({std::string(o.name), std::string(o.summary)});
  }
  out.push_back({"key-expiry", "every key or document a protocol leaves in its store expires"});
  out.push_back({"survives-restart",
                 "the promise holds across node restarts and store restarts: no window or bucket "
                 "is reset by one"});
  return out;
}

Status CheckCheckName(const std::string& name) {
  std::string expected;
  for (const CheckInfo& c : Checks()) {
    if (c.name == name) return absl::OkStatus();
    expected += (expected.empty() ? "" : ", ") + c.name;
  }
  return absl::InvalidArgumentError("unknown check '" + name + "' (expected one of " + expected +
                                    "; the boundary-burst ratio is always reported)");
}

int64_t LimiterOutcome::violation_count() const {
  int64_t n = 0;
  for (const CheckResult& c : checks) n += static_cast<int64_t>(c.violations.size());
  return n;
}

int64_t Comparison::violation_count() const {
  int64_t n = 0;
  for (const LimiterOutcome& o : limiters) n += o.violation_count();
  return n;
}

std::string LimiterSpec::DisplayName() const {
  if (!name.empty()) return name;
  std::string out = protocol;
  const ProtocolInfo* info = Info();
  if (info == nullptr || info->store == "memory") return out;
  std::vector<std::string> extras;
  if (on_store_error.kind != FailurePolicy::Kind::kError) {
    extras.emplace_back(FailurePolicyName(on_store_error.kind));
  }
  if (durability != Durability::kAlways) {
    extras.push_back("durability " + std::string(DurabilityName(durability)));
  }
  for (size_t i = 0; i < extras.size(); ++i) out += (i == 0 ? " (" : ", ") + extras[i];
  return extras.empty() ? out : out + ")";
}

std::string FaultSpec::Describe(Instant start) const {
  const std::string when = " at " + FormatInstant(start + at);
  switch (kind) {
    case Kind::kCrash:
      return "node " + std::to_string(node) + " crashed" + when + " (down " +
             FormatDuration(amount) + ")";
    case Kind::kClockJump:
      return "node " + std::to_string(node) + "'s clock jumped by " + FormatDuration(amount) + when;
    case Kind::kStoreRestart:
      return "the store restarted" + when + " (down " + FormatDuration(amount) + ")";
    case Kind::kStoreOutage:
      return "the store was unreachable" + when + " for " + FormatDuration(amount);
    case Kind::kLatencySpike:
      return "store latency rose by " + FormatDuration(extra) + " per leg" + when + " for " +
             FormatDuration(amount);
  }
  return "?";
}

uint64_t Comparison::history_hash() const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const LimiterOutcome& o : limiters) h = (h ^ o.history_hash) * 0x100000001b3ULL;
  return h;
}

Result<Comparison> RunScenario(const Scenario& scenario, uint64_t seed,
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
  config.buggify.max_delay = std::max(Duration(std::chrono::milliseconds(1)),
                                      10 * (scenario.to_store.base + scenario.to_store.jitter));

  Comparison c{scenario.name,
               scenario.description,
               seed,
               scenario.start,
               config.buggify.enabled,
               {},
               scenario.claim_limit,
               scenario.claim_window,
               {},
               {},
               {}};
  for (const auto& g : scenario.traffic) c.traffic.push_back(g->Describe());

  // Where the kv protocols keep their state: MemoryKv unless the scenario says otherwise.
  std::shared_ptr<KvStoreSource> memory_kv;
  if (!scenario.kv_store) memory_kv = *KvStoreSource::Make("memory");
  KvStoreSource& kv_source = scenario.kv_store ? *scenario.kv_store : *memory_kv;
  bool has_store = false, has_kv = false;
  for (const LimiterSpec& spec : scenario.limiters) {
    const ProtocolInfo* info = spec.Info();
    has_store = has_store || (info != nullptr && info->store != "memory");
    has_kv = has_kv || (info != nullptr && info->store == "kv");
  }
  const bool can_restart_store = kv_source.memory() || kv_source.owns_server() || !has_kv;
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
          "a store-restart fault needs a Redis that ratelab starts (store redis): it cannot "
          "restart the one at " +
          kv_source.where());
    }
  }
  if (has_kv && !kv_source.Note().empty()) c.notes.push_back(kv_source.Note());
  std::vector<FaultWindow> restarts;
  for (const FaultSpec& f : faults) {
    const Instant at = scenario.start + f.at;
    c.faults.push_back({f.Describe(scenario.start), at,
                        f.kind == FaultSpec::Kind::kClockJump ? at : at + f.amount});
    if (f.kind == FaultSpec::Kind::kCrash || f.kind == FaultSpec::Kind::kStoreRestart) {
      restarts.push_back(c.faults.back());
    }
  }
  AddFaultNotes(scenario, faults, kv_source, c.notes);

  for (const LimiterSpec& spec : scenario.limiters) {
    if (progress) progress(spec.DisplayName(), c.limiters.size(), scenario.limiters.size());
    // Scenarios built in code have not been through the reader's checks.
    if (Status s = spec.Check(); !s.ok()) return s;
    LimiterRun run(config, spec, faults, scenario.start, arrivals, kv_source);
    if (!run.status.ok()) return run.status;
    LimiterOutcome o;
    o.name = spec.DisplayName();
    o.protocol = spec.protocol;
    o.policy = spec.policy;
    o.history = run.history;
    o.history_hash = HistoryHash(o.history);
    o.state = run.sim.ProcessState();
    o.state += run.stores.Usage();
    o.offered = static_cast<int64_t>(o.history.size());
    for (const HistoryEvent& e : o.history) {
      o.admitted += e.admitted();
      o.denied += e.denied();
      o.unanswered += !e.decision.has_value();
    }
    // Judged at the protocol's own time resolution: no alarm for what it cannot see.
    const Duration resolution = spec.Info()->time_resolution;
    const bool coarse = resolution > Duration(1);
    const History judged = coarse ? AtResolution(o.history, resolution) : History{};
    const History& h = coarse ? judged : o.history;
    const AnyWindowReport any = CheckAnyWindowCap(h, c.limit, c.window);
    o.max_in_any_window = any.max_in_any_window;
    for (const std::string& name : scenario.checks) {
      if (name == "survives-restart" && restarts.empty()) {
        o.checks.push_back({name, {}});  // nothing restarted: nothing was reset
        continue;
      }
      if (name != "survives-restart") {
        o.checks.push_back({name, Check(name, h, spec.policy, c.limit, c.window, any, run.stores)});
        continue;
      }
      // What the restarts broke: promise violations across a restart, for keys whose promise
      // holds in the same run without its restarts.
      std::vector<FaultSpec> kept;
      for (const FaultSpec& f : faults) {
        if (f.kind != FaultSpec::Kind::kCrash && f.kind != FaultSpec::Kind::kStoreRestart) {
          kept.push_back(f);
        }
      }
      const LimiterRun calm(config, spec, kept, scenario.start, arrivals, kv_source);
      if (!calm.status.ok()) return calm.status;
      std::set<std::string> broken_anyway;
      for (const Violation& v : CheckPromise(AtResolution(calm.history, resolution), spec.policy)) {
        broken_anyway.insert(v.key);
      }
      std::vector<Violation> broken;
      for (Violation& v : BrokenByRestarts(h, spec.policy, restarts)) {
        if (!broken_anyway.contains(v.key)) broken.push_back(std::move(v));
      }
      o.checks.push_back({name, std::move(broken)});
    }
    c.limiters.push_back(std::move(o));
  }
  return c;
}

}  // namespace ratelab
