// The scenario file format (docs/scenarios.md): YAML in, Scenario out, every error located.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "impl/limiters/protocol.h"
#include "impl/limiters/window_offset.h"
#include "judge/oracles.h"
#include "sim/internal/scenario_reader.h"
#include "sim/protocol_under_test.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {

namespace internal {

Result<Scenario> ScenarioReader::Read(const YAML::Node& root) {
  if (!root.IsMap()) return Error(root, "a scenario must be a mapping of keys such as limiters:");
  RL_RETURN_IF_ERROR(NoDuplicateKeys(root));
  RL_RETURN_IF_ERROR(OnlyKeys(
      root, "the scenario",
      {"name", "description", "seed", "start", "nodes", "latency", "buggify", "max_transit",
       "store", "rules", "limiters", "claim", "traffic", "faults", "swarm", "checks"}));
  Scenario s;
  RL_ASSIGN(s.name, StringAt(root, "name", false, "unnamed"));
  RL_ASSIGN(s.description, StringAt(root, "description", false, "", Controls::kLines));
  int64_t seed = 1;
  RL_ASSIGN(seed, IntAt(root, "seed", false, 0, std::numeric_limits<int64_t>::max(), 1));
  s.seed = static_cast<uint64_t>(seed);
  if (root["nodes"]) RL_RETURN_IF_ERROR(ReadNodes(root["nodes"], s));
  if (root["latency"]) RL_RETURN_IF_ERROR(ReadLatency(root["latency"], s));
  std::string buggify;
  RL_ASSIGN(buggify, StringAt(root, "buggify", false, "off"));
  if (buggify == "off") {
    s.buggify = Scenario::BuggifyMode::kOff;
  } else if (buggify == "on") {
    s.buggify = Scenario::BuggifyMode::kOn;
  } else if (buggify == "auto") {
    s.buggify = Scenario::BuggifyMode::kAuto;
  } else {
    return Error(root["buggify"], "'buggify' must be off, on or auto (got '" + buggify + "')");
  }
  if (const YAML::Node transit = root["max_transit"]) {
    Duration bound{};
    RL_ASSIGN(bound, DurationAt(root, "max_transit", true));
    if (bound < Duration(0) || bound > kLongestMaxTransit) {
      return Error(transit,
                   "'max_transit' must be from 0 to 1h (no request waits that long on its "
                   "way to a store and is still answered)");
    }
    s.buggify_max_delay = bound;
  }

  if (const YAML::Node start = root["start"]) {
    start_given_ = true;
    const std::optional<Instant> at =
        start.IsScalar() ? ParseInstant(start.Scalar()) : std::optional<Instant>();
    if (!at) {
      return Error(start, "'start' must be a UTC instant such as 2026-01-01T00:00:00Z (got '" +
                              (start.IsScalar() ? start.Scalar() : std::string("a collection")) +
                              "')");
    }
    s.start = *at;
  }
  if (root["store"]) RL_RETURN_IF_ERROR(ReadStore(root["store"], s));
  if (const YAML::Node swarm = root["swarm"]) {
    if (!swarm.IsScalar() || !YAML::convert<bool>::decode(swarm, s.swarm)) {
      return Error(swarm, "'swarm' must be true or false");
    }
  }

  if (root["rules"]) RL_RETURN_IF_ERROR(ReadRulesSection(root["rules"], s));
  const YAML::Node limiters = root["limiters"];
  if (!limiters || !limiters.IsSequence() || limiters.size() == 0) {
    return Error(limiters ? limiters : root, "'limiters' must list at least one limiter");
  }
  for (const YAML::Node& l : limiters) RL_RETURN_IF_ERROR(ReadLimiter(l, s));
  // Every limiter's results are reported under its name: two may not share one.
  for (size_t i = 0; i < s.limiters.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (s.limiters[i].DisplayName() == s.limiters[j].DisplayName()) {
        return Error(limiters[i], "two limiters are called '" + s.limiters[i].DisplayName() +
                                      "' (this one and the one at line " +
                                      std::to_string(limiters[j].Mark().line + 1) +
                                      "); give one a name: of its own");
      }
    }
  }

  if (const YAML::Node claim = root["claim"]) {
    RL_RETURN_IF_ERROR(OnlyKeys(claim, "claim", {"limit", "window"}));
    RL_ASSIGN(s.claim_limit, IntAt(claim, "limit", true, 1, int64_t{1} << 40));
    RL_ASSIGN(s.claim_window, DurationAt(claim, "window", true));
  } else if (s.rules) {
    return Error(root,
                 "missing 'claim': a scenario with rules needs the claim its limiters are "
                 "held to ({limit: N, window: W})");
  } else {
    // No claim: each limiter is held to its own promise. The first limiter's N in any W (for a
    // bucket, its burst over burst intervals) is kept as the yardstick of the report's measures.
    const Policy& p = s.limiters.front().policy;
    s.claim_limit = p.limit;
    s.claim_window = p.IsBucket() ? p.limit * p.window : p.window;
    s.claim_given = false;
    s.checks = {CheckId::kPromise};
  }
  if (s.claim_window.count() <= 0)
    return Error(root["claim"], "the claim's window must be positive");

  const YAML::Node traffic = root["traffic"];
  if (!traffic || !traffic.IsSequence() || traffic.size() == 0) {
    return Error(traffic ? traffic : root, "'traffic' must list at least one generator");
  }
  for (const YAML::Node& t : traffic) RL_RETURN_IF_ERROR(ReadTraffic(t, s));
  if (const YAML::Node faults = root["faults"]) {
    if (!faults.IsSequence()) return Error(faults, "'faults' must be a list");
    for (const YAML::Node& f : faults) RL_RETURN_IF_ERROR(ReadFault(f, s));
  }
  if (s.rules) s.checks = {CheckId::kAnyWindowCap};
  if (const YAML::Node checks = root["checks"]) RL_RETURN_IF_ERROR(ReadChecks(checks, s));
  // A claim given is a check like any other: a limiter that admits past it broke it, whatever
  // else the scenario checks, and every verdict, JUnit case and exit status says so.
  const bool claim_checked =
      std::find(s.checks.begin(), s.checks.end(), CheckId::kAnyWindowCap) != s.checks.end();
  if (s.claim_given && !claim_checked) s.checks.push_back(CheckId::kAnyWindowCap);
  if (!s.claim_given) {
    for (CheckId check :
         {CheckId::kAnyWindowCap, CheckId::kAlignedWindowCap, CheckId::kAnchoredWindowCap}) {
      if (std::find(s.checks.begin(), s.checks.end(), check) == s.checks.end()) continue;
      return Error(root["checks"],
                   std::string(CheckName(check)) +
                       " holds every limiter to the scenario's claim, and it gives none: add one "
                       "(claim: {limit: N, window: W}), or leave the check out to hold each "
                       "limiter to its own promise");
    }
  }
  for (size_t i = 0; i < s.faults.size(); ++i) {
    if (s.faults[i].kind == FaultKind::kListenDown && (!s.rules || s.rules->changes.empty())) {
      return Error(root["faults"][i], "a listen-down fault needs rules: with changes to miss");
    }
  }
  return s;
}

Status ScenarioReader::ReadNodes(const YAML::Node& n, Scenario& s) const {
  if (n.IsScalar()) {
    int64_t count = 0;
    if (!YAML::convert<int64_t>::decode(n, count) || count < 1 || count > 64) {
      return Error(n, "'nodes' must be a count from 1 to 64 or a list of nodes");
    }
    s.nodes.assign(static_cast<size_t>(count), NodeSpec{});
    return absl::OkStatus();
  }
  if (!n.IsSequence() || n.size() == 0 || n.size() > 64) {
    return Error(n, "'nodes' must be a count from 1 to 64 or a list of nodes");
  }
  s.nodes.clear();
  for (const YAML::Node& node : n) {
    RL_RETURN_IF_ERROR(OnlyKeys(node, "a node", {"clock_offset", "drift_ppm"}));
    NodeSpec spec;
    RL_ASSIGN(spec.clock_offset, DurationAt(node, "clock_offset", false));
    RL_ASSIGN(spec.drift_ppm, IntAt(node, "drift_ppm", false, -1'000'000, 1'000'000));
    s.nodes.push_back(spec);
  }
  return absl::OkStatus();
}

Status ScenarioReader::ReadLatency(const YAML::Node& n, Scenario& s) const {
  RL_RETURN_IF_ERROR(OnlyKeys(n, "latency", {"to_store", "from_store"}));
  for (auto [key, leg] : {std::pair{"to_store", &s.to_store}, {"from_store", &s.from_store}}) {
    const YAML::Node l = n[key];
    if (!l) continue;
    RL_RETURN_IF_ERROR(OnlyKeys(l, std::string("latency ") + key, {"base", "jitter"}));
    RL_ASSIGN(leg->base, DurationAt(l, "base", false));
    RL_ASSIGN(leg->jitter, DurationAt(l, "jitter", false));
    if (leg->base.count() < 0 || leg->jitter.count() < 0) {
      return Error(l, std::string("latency ") + key + " cannot be negative");
    }
  }
  return absl::OkStatus();
}

Status ScenarioReader::ReadStore(const YAML::Node& n, Scenario& s) {
  // `store: redis` is short for `store: {kv: redis}`.
  std::string kv = "memory";
  if (n.IsScalar()) {
    kv = n.as<std::string>();
  } else {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "store", {"kv", "durability"}));
    RL_ASSIGN(kv, StringAt(n, "kv", false, "memory"));
  }
  Result<StoreName> store = StoreName::Parse(kv);
  if (!store.ok()) return Error(n.IsScalar() ? n : n["kv"], std::string(store.status().message()));
  s.store = *std::move(store);
  if (n.IsScalar()) return absl::OkStatus();
  std::string name;
  RL_ASSIGN(name, StringAt(n, "durability", false, "always"));
  const Result<Durability> d = ParseDurability(name);
  if (!d.ok()) return Error(n["durability"], std::string(d.status().message()));
  default_durability_ = *d;
  return absl::OkStatus();
}

Status ScenarioReader::ReadLimiter(const YAML::Node& n, Scenario& s) const {
  RL_RETURN_IF_ERROR(OnlyKeys(
      n, "a limiter",
      {"name", "protocol", "algorithm", "limit", "window", "burst", "interval", "window_offset",
       "on_store_error", "breaker", "durability", "via", "exec", "exec_timeout"}));
  LimiterSpec spec;
  if (s.rules && (n["exec"] || n["exec_timeout"])) {
    return Error(n["exec"] ? n["exec"] : n["exec_timeout"],
                 "a limiter by the scenario's rules takes no 'exec': a process is held to one "
                 "algorithm and policy");
  }
  if (s.rules) {
    RL_RETURN_IF_ERROR(ReadRulesLimiter(n, spec, s));
  } else {
    std::string name;
    RL_ASSIGN(name, StringAt(n, "algorithm", true));
    const std::optional<Algorithm> a = AlgorithmNamed(name);
    if (!a) {
      return Error(n["algorithm"],
                   "unknown algorithm '" + name + "' (expected " + AlgorithmChoices() + ")");
    }
    spec.policy.algorithm = *a;
    if (Describe(*a).bucket) {
      RL_ASSIGN(spec.policy.limit, IntAt(n, "burst", true, 1, int64_t{1} << 40));
      RL_ASSIGN(spec.policy.window, DurationAt(n, "interval", true));
    } else {
      RL_ASSIGN(spec.policy.limit, IntAt(n, "limit", true, 1, int64_t{1} << 40));
      RL_ASSIGN(spec.policy.window, DurationAt(n, "window", true));
    }
    if (std::optional<std::string> problem = spec.policy.Problem()) return Error(n, *problem);
    if (n["window_offset"]) {
      std::string offset;
      RL_ASSIGN(offset, StringAt(n, "window_offset", true));
      Result<Policy> shifted = WithWindowOffset(spec.policy, offset);
      if (!shifted.ok()) {
        return Error(n["window_offset"],
                     "'window_offset': " + std::string(shifted.status().message()));
      }
      spec.policy = *std::move(shifted);
    }
    if (n["exec"] || n["exec_timeout"]) {
      RL_RETURN_IF_ERROR(ReadProcess(n, spec));
    } else {
      std::string protocol;
      RL_ASSIGN(protocol, StringAt(n, "protocol", false, "memory-" + name));
      if (Status problem = CheckProtocol(protocol, spec.policy); !problem.ok()) {
        return Error(n["protocol"] ? n["protocol"] : n, std::string(problem.message()));
      }
      spec.protocol = RegistryProtocol(protocol);
    }
  }
  std::string via;
  RL_ASSIGN(via, StringAt(n, "via", false, "direct"));
  if (via != "direct" && via != "http") {
    return Error(n["via"],
                 "'via' must be direct (the protocol called as a library) or http "
                 "(under the rate-limit service, as its clients see it), not '" +
                     via + "'");
  }
  spec.via_http = via == "http";
  if (spec.via_http && !spec.by_rules) {
    if (Result<Rule> rule = RuleForEveryone(spec.policy); !rule.ok()) {
      return Error(n, "via http: " + std::string(rule.status().message()));
    }
  }
  RL_ASSIGN(spec.name, StringAt(n, "name", false));
  std::string durability;
  RL_ASSIGN(durability,
            StringAt(n, "durability", false, std::string(DurabilityName(default_durability_))));
  const Result<Durability> d = ParseDurability(durability);
  if (!d.ok()) return Error(n["durability"], std::string(d.status().message()));
  spec.durability = *d;
  std::string on_error;
  RL_ASSIGN(on_error, StringAt(n, "on_store_error", false, "error"));
  const std::optional<FailurePolicy::Kind> kind = FailurePolicyNamed(on_error);
  if (!kind) {
    return Error(n["on_store_error"], "unknown failure policy '" + on_error +
                                          "' (expected error, fail-open, fail-closed or "
                                          "circuit-breaker)");
  }
  spec.on_store_error.kind = *kind;
  if (const YAML::Node b = n["breaker"]) {
    if (*kind != FailurePolicy::Kind::kCircuitBreaker) {
      return Error(b, "'breaker' needs on_store_error: circuit-breaker");
    }
    RL_RETURN_IF_ERROR(OnlyKeys(b, "breaker", {"threshold", "cool_down"}));
    RL_ASSIGN(spec.on_store_error.threshold, IntAt(b, "threshold", false, 1, 1'000'000, 5));
    RL_ASSIGN(spec.on_store_error.cool_down,
              DurationAt(b, "cool_down", false, spec.on_store_error.cool_down));
    if (spec.on_store_error.cool_down.count() <= 0) {
      return Error(b, "the breaker's cool_down must be positive");
    }
  }
  s.limiters.push_back(spec);
  return absl::OkStatus();
}

Status ScenarioReader::ReadProcess(const YAML::Node& n, LimiterSpec& spec) const {
  if (n["protocol"]) {
    return Error(n["protocol"], "a limiter is a protocol or a process ('exec'), not both");
  }
  for (const char* store_only : {"on_store_error", "breaker", "durability"}) {
    if (n[store_only]) {
      return Error(n[store_only], std::string("a limiter process keeps its state in its own "
                                              "memory, with no store: it takes no '") +
                                      store_only + "'");
    }
  }
  UserProcess p;
  RL_ASSIGN(p.command, StringAt(n, "exec", true));
  if (processes_ == LimiterProcesses::kRefuse) {
    return Error(n["exec"], "this reader starts no limiter processes");
  }
  p.model = spec.policy.algorithm;
  p.directory = Beside(".");  // the scenario file's directory
  if (n["exec_timeout"]) {
    Duration timeout{};
    RL_ASSIGN(timeout, DurationAt(n, "exec_timeout", true));
    if (timeout < std::chrono::milliseconds(1) || timeout > std::chrono::hours(1)) {
      return Error(n["exec_timeout"], "'exec_timeout' must be between 1ms and 1h");
    }
    p.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  }
  Result<std::shared_ptr<const ProtocolInfo>> protocol = ResolveProtocol("", std::nullopt, p);
  if (!protocol.ok()) return Error(n["exec"], std::string(protocol.status().message()));
  if (Status s = TryProcessOnce(**protocol, spec.policy, kDefaultScenarioStart); !s.ok()) {
    return Error(n["exec"], std::string(s.message()));
  }
  spec = LimiterOf(*protocol, spec.policy);
  return absl::OkStatus();
}

Status ScenarioReader::ReadFault(const YAML::Node& n, Scenario& s) const {
  if (!n.IsMap()) return Error(n, "a fault must be a mapping with a 'type'");
  std::string type;
  RL_ASSIGN(type, StringAt(n, "type", true));
  const std::optional<FaultKind> kind = Named<FaultKindInfo>(kFaultKinds, type);
  if (!kind || !Describe(*kind).in_scenarios) {
    return Error(n["type"],
                 "unknown fault type '" + type + "' (expected " + ScenarioFaultChoices() +
                     (kind ? "; a search draws a " + type + " (check --faults)" : "") + ")");
  }
  const FaultKindInfo& row = Describe(*kind);
  std::vector<std::string> keys = {"type"};
  if (row.on_node) keys.push_back("node");
  keys.push_back("at");
  keys.push_back(std::string(row.amount));
  if (row.extra) keys.push_back("extra");
  RL_RETURN_IF_ERROR(OnlyKeys(n, "a " + type + " fault", keys));
  FaultSpec f;
  f.kind = *kind;
  RL_ASSIGN(f.amount, DurationAt(n, std::string(row.amount), row.amount_required));
  if (row.extra) {
    RL_ASSIGN(f.extra, DurationAt(n, "extra", true));
  }
  const bool on_node = row.on_node;
  if (f.kind != FaultKind::kClockJump && (f.amount.count() < 0 || f.extra.count() < 0)) {
    return Error(n, "a fault's durations cannot be negative");
  }
  if (on_node) {
    int64_t node = 0;
    RL_ASSIGN(node, IntAt(n, "node", true, 0, static_cast<int64_t>(s.nodes.size()) - 1));
    f.node = static_cast<int>(node);
  }
  RL_ASSIGN(f.at, DurationAt(n, "at", true));
  s.faults.push_back(f);
  return absl::OkStatus();
}

Status ScenarioReader::ReadChecks(const YAML::Node& n, Scenario& s) const {
  if (!n.IsSequence() || n.size() == 0) return Error(n, "'checks' must be a non-empty list");
  s.checks.clear();
  for (const YAML::Node& c : n) {
    const std::string name = c.IsScalar() ? c.Scalar() : "";
    Result<CheckId> check = ParseCheck(name);
    if (!check.ok()) return Error(c, std::string(check.status().message()));
    if (s.rules && CheckOf(*check).by_policy) {
      return Error(c, "the check " + name +
                          " judges a limiter by its own policy, and a limiter by rules has one "
                          "per rule: a scenario with rules is held to its claim (any-window-cap, "
                          "aligned-window-cap, anchored-window-cap) and key-expiry");
    }
    s.checks.push_back(*check);
  }
  return absl::OkStatus();
}

Result<std::string> ReadYamlText(const std::string& path, const InputFileKind& kind) {
  return ReadInputFile(path, kind);
}

std::optional<YAML::Mark> YamlAliasBomb(const YAML::Node& root, size_t bytes) {
  const size_t most = std::max(kMostYamlNodes, bytes);
  size_t seen = 0;
  std::vector<YAML::Node> to_see = {root};
  while (!to_see.empty()) {
    const YAML::Node n = std::move(to_see.back());
    to_see.pop_back();
    if (++seen > most) return n.Mark();
    if (n.IsSequence()) {
      for (const YAML::Node& child : n) to_see.push_back(child);
    } else if (n.IsMap()) {
      for (const auto& pair : n) {
        to_see.push_back(pair.first);
        to_see.push_back(pair.second);
      }
    }
  }
  return std::nullopt;
}

}  // namespace internal

Result<Scenario> ParseScenario(const std::string& text, const std::string& source,
                               LimiterProcesses processes) {
  return internal::ParseYaml(text, source, [&](const YAML::Node& root) {
    return internal::ScenarioReader(source, processes).Read(root);
  });
}

Result<Scenario> LoadScenario(const std::string& path) {
  Result<std::string> text = internal::ReadYamlText(path, kScenarioFile);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace ratelab
