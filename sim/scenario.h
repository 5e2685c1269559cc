// A scenario: what to simulate and what to check. Loaded from YAML (LoadScenario) or built in
// code (the demo). See docs/scenarios.md for the file format.
#ifndef RATELAB_SIM_SCENARIO_H_
#define RATELAB_SIM_SCENARIO_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/limiters/failure_policy.h"
#include "impl/limiters/protocol.h"
#include "impl/store/durability.h"
#include "judge/checks.h"
#include "model/named.h"
#include "model/policy.h"
#include "sim/fault_kind.h"
#include "sim/rule_propagation.h"
#include "sim/simulation.h"
#include "sim/store_source.h"
#include "sim/traffic.h"

namespace ratelab {

// A limiter: a protocol with its policy and its settings, as a scenario runs it (and `check`,
// `stress` and `worst` run the protocol they test).
struct LimiterSpec {
  // The registry's or a user's own; null only for a limiter by rules that names none (each rule's
  // own memory-<algorithm>).
  std::shared_ptr<const ProtocolInfo> protocol;
  Policy policy;
  FailurePolicy on_store_error;  // what the limiter does when its store fails
  // How much of its store survives a store restart (kv protocols; each limiter has its own).
  Durability durability = Durability::kAlways;
  // What reports call it; empty: the protocol's name, with its failure policy and durability
  // when they are not the defaults.
  std::string name;
  // Enforces the scenario's rules (Scenario::rules, impl/rules/rules_limiter.h) instead of
  // `policy`: each rule by `protocol`, or when `protocol` is null by memory-<its algorithm>.
  bool by_rules = false;
  // Served over HTTP: the limiter runs under the rate-limit service (impl/service/
  // service_protocol.h), decided as a client reads the answers (whole-second Retry-After), its
  // failure policy the service's. Without rules, under one rule of `policy` for each user.
  bool via_http = false;

  std::string DisplayName() const;
  // The protocol's name; empty for a limiter by rules that names none.
  std::string ProtocolName() const { return protocol ? protocol->name : ""; }
  // The name of the protocol that enforces `policy`: `protocol`'s, or for a limiter by rules
  // without one, memory-<the policy's algorithm>.
  std::string ProtocolFor(const Policy& policy) const;
  // `protocol`, or for a limiter by rules in process, memory-fixed-window's (every memory-
  // protocol keeps its state in process, at the same resolution, on the client's clock).
  const ProtocolInfo* Info() const;
  // Whether `policy` suits the protocol (ProtocolInfo::Suits); OK for a limiter by rules (the
  // reader checks each rule).
  Status Check() const;
  // An instance of the protocol that enforces `policy` (ProtocolFor).
  Result<std::unique_ptr<Protocol>> Make(const Policy& policy, const Stores& stores) const;
  Result<std::unique_ptr<Protocol>> Make(const Stores& stores) const {
    return Make(policy, stores);
  }
};

struct FaultSpec {
  FaultKind kind = FaultKind::kCrash;  // any but kClockSkew, a node's clock_offset
  int node = 0;                        // kCrash, kClockJump, kListenDown
  Duration at{};                       // from the scenario's start
  // kCrash, kStoreRestart: down for; kClockJump: by; the others (kListenDown: the node's
  // connection that hears of rule changes): how long.
  Duration amount{};
  // kLatencySpike: added to each leg of each step; kStoreFailover: the replica's lag (it has
  // every write until `at - extra`, none after; kStoreFailover's `amount` is the time down).
  Duration extra{};

  // "store outage at 12:00:10.000 for 20s", given the scenario's start.
  std::string Describe(Instant start) const;
};

// Where a scenario's clock starts unless it says otherwise (and where a search's cases start):
// 2026-01-01T00:00:00Z, a realistic instant, so that scripts that compare with real epoch values
// (or keep time in floats) behave as in production.
inline constexpr Instant kDefaultScenarioStart =
    FromUnixNanos(int64_t{1'767'225'600} * 1'000'000'000);

// The most a scenario's max_transit, or check's and worst's --max-transit, may be: no request
// waits longer on its way to a store and is still answered.
inline constexpr Duration kLongestMaxTransit = std::chrono::hours(1);

struct Scenario {
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Instant start = kDefaultScenarioStart;
  // The zone its times are shown in: a replayed log's own (+01:00), when the scenario opens with
  // the log and every record was written in that zone; none: UTC.
  std::optional<Duration> utc_offset;
  std::vector<NodeSpec> nodes = {NodeSpec{}};
  Latency to_store;
  Latency from_store;
  enum class BuggifyMode { kOff, kOn, kAuto } buggify = BuggifyMode::kOff;
  // The longest a BUGGIFY delay may be (at most kLongestMaxTransit); none: ten times a step's
  // latency.
  std::optional<Duration> buggify_max_delay;
  std::vector<LimiterSpec> limiters;
  // The claim every limiter is held to by the window checks: `claim_limit` in any `claim_window`.
  int64_t claim_limit = 0;
  Duration claim_window{};
  // Whether the scenario gave its claim. When it did not, each limiter is held to its own promise
  // alone (no any-window-cap), and the claim above is only the yardstick the report's measures
  // use: the first limiter's N in any W (a bucket's B in any B·T).
  bool claim_given = true;
  std::vector<std::unique_ptr<TrafficGenerator>> traffic;
  std::vector<FaultSpec> faults;
  // Swarm mode: each seed also draws a few faults of its own (see swarm.h).
  bool swarm = false;
  // Each limiter's kv store keeps the keys it finds expired (LimiterOutcome::lapses): for a
  // search's short runs, whose findings say which key a late request found gone.
  bool keep_lapses = false;
  // What every limiter's history is held to (checks.h, `ratelab list checks`); the claim's
  // any-window-cap always among them.
  std::vector<CheckId> checks = {CheckId::kPromise, CheckId::kAnyWindowCap};
  // The rules the limiters by rules enforce, and their changes (rule_propagation.h); null when
  // the scenario has none.
  std::shared_ptr<const RulesSpec> rules;
  // Where the limiters keep their state, as the scenario names it (`store`); memory by default.
  StoreName store;
  // The stores opened from `store` (sim/store_source.h), by whoever runs the scenario: a real
  // server's are the live layer's (live/server_stores.h: OpenStoreSource). Null: MemoryStores(),
  // when `store` is memory; a run refuses a scenario whose store is a server and not opened.
  // Shared, so that the private servers it starts serve every run of a sweep.
  std::shared_ptr<StoreSource> stores;
};

// OK when `store` is memory, or when one of `s`'s limiters keeps its state on such a store (a kv
// protocol on Redis, a SQL protocol on PostgreSQL); else InvalidArgument saying so: a store that
// no limiter uses would change nothing but the reproduce line. RunScenario refuses such a run;
// a caller that opens the store asks first, before it starts a server for nothing.
Status CheckStoreIsUsed(const Scenario& s, const StoreName& store);

// Whether reading a scenario starts the limiter processes it names (`exec:`), or refuses them
// (a reader of untrusted text, such as the fuzzer, runs nothing).
enum class LimiterProcesses { kStart, kRefuse };

// Reads the scenario at `path`. Errors read "FILE:LINE:COLUMN: what is wrong, what was expected".
Result<Scenario> LoadScenario(const std::string& path);
// The same from text; `source` names it in errors.
Result<Scenario> ParseScenario(const std::string& text, const std::string& source,
                               LimiterProcesses processes = LimiterProcesses::kStart);

// The demo's scenario: every algorithm in process on steady traffic, a boundary attack, a burst
// and many users, on one node with no latency.
Scenario DemoScenario();

}  // namespace ratelab

#endif  // RATELAB_SIM_SCENARIO_H_
