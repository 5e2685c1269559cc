#include "sim/scenario_run.h"

#include <memory>

#include "impl/limiters/in_process_protocol.h"
#include "model/oracles.h"
#include "sim/simulation.h"

namespace ratelab {

namespace {

constexpr uint64_t kTrafficStream = 2;
constexpr uint64_t kBuggifyStream = 3;

// `any_window` is the any-window report for the claim, computed once per history.
std::vector<Violation> Check(const std::string& name, const History& h, const Policy& own,
                             int64_t claim_limit, Duration claim_window,
                             const AnyWindowReport& any_window) {
  if (name == "promise") return CheckPromise(h, own);
  if (name == "any-window-cap") return any_window.violations;
  if (name == "aligned-window-cap") return CheckAlignedWindowCap(h, claim_limit, claim_window);
  if (name == "bucket-conformance") {
    return own.IsBucket() ? CheckBucketConformance(h, own.limit, own.window)
                          : std::vector<Violation>{};
  }
  if (name == "false-denials") return CheckFalseDenials(h, own);
  if (name == "retry-after") return CheckRetryAfter(h, own);
  return {};
}

ProtocolFactory FactoryFor(const LimiterSpec& spec) {
  // Every protocol so far is in process; stores arrive with the seeds' protocols.
  const Policy policy = spec.policy;
  return [policy](int) { return std::make_unique<InProcessProtocol>(policy); };
}

}  // namespace

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

uint64_t Comparison::history_hash() const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const LimiterOutcome& o : limiters) h = (h ^ o.history_hash) * 0x100000001b3ULL;
  return h;
}

Result<Comparison> RunScenario(const Scenario& scenario, uint64_t seed) {
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
               seed,
               config.buggify.enabled,
               {},
               scenario.claim_limit,
               scenario.claim_window,
               {},
               {}};
  for (const auto& g : scenario.traffic) c.traffic.push_back(g->Describe());
  for (const FaultSpec& f : scenario.faults) {
    if (f.kind != FaultSpec::Kind::kCrash) continue;
    for (const LimiterSpec& spec : scenario.limiters) {
      c.notes.push_back("node " + std::to_string(f.node) + " crashed at " +
                        FormatInstant(scenario.start + f.at) + " (down " +
                        FormatDuration(f.amount) + "): " + spec.protocol +
                        " keeps its counts in process memory, so the restart forgot them");
    }
  }
  for (const LimiterSpec& spec : scenario.limiters) {
    Simulation sim(config, FactoryFor(spec));
    for (const FaultSpec& f : scenario.faults) {
      if (f.kind == FaultSpec::Kind::kCrash) {
        sim.CrashNode(f.node, scenario.start + f.at, f.amount);
      } else {
        sim.JumpClock(f.node, scenario.start + f.at, f.amount);
      }
    }
    LimiterOutcome o;
    o.protocol = spec.protocol;
    o.policy = spec.policy;
    o.history = sim.Run(arrivals);
    o.history_hash = HistoryHash(o.history);
    o.offered = static_cast<int64_t>(o.history.size());
    for (const HistoryEvent& e : o.history) {
      o.admitted += e.admitted();
      o.denied += e.denied();
      o.unanswered += !e.decision.has_value();
    }
    const AnyWindowReport any = CheckAnyWindowCap(o.history, c.limit, c.window);
    o.max_in_any_window = any.max_in_any_window;
    for (const std::string& name : scenario.checks) {
      o.checks.push_back({name, Check(name, o.history, spec.policy, c.limit, c.window, any)});
    }
    c.limiters.push_back(std::move(o));
  }
  return c;
}

}  // namespace ratelab
