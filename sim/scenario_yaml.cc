// The scenario file format (docs/scenarios.md): YAML in, Scenario out, every error located.
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "impl/limiters/protocol.h"
#include "model/oracles.h"
#include "sim/scenario.h"

namespace ratelab {

namespace {

// Parses one scenario; every failure is a Status naming source:line:column.
class ScenarioReader {
 public:
  explicit ScenarioReader(std::string source) : source_(std::move(source)) {}

  Status Error(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    return absl::InvalidArgumentError(source_ + ":" + std::to_string(m.line + 1) + ":" +
                                      std::to_string(m.column + 1) + ": " + what);
  }

  // Fails on any key of `map` not in `allowed`.
  Status OnlyKeys(const YAML::Node& map, const std::string& what,
                  const std::vector<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, what + " must be a mapping");
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        return Error(kv.first,
                     "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
    return absl::OkStatus();
  }

  Result<Duration> DurationAt(const YAML::Node& map, const std::string& key, bool required,
                              Duration fallback = Duration(0)) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "' (a duration such as 500ms, 1m30s)");
      return fallback;
    }
    if (!n.IsScalar()) return Error(n, "'" + key + "' must be a duration such as 500ms, 1m30s");
    const std::optional<Duration> d = ParseDuration(n.Scalar());
    if (!d) {
      return Error(n, "'" + key + "' is not a duration: '" + n.Scalar() +
                          "' (expected a number and a unit among h, m, s, ms, us, ns)");
    }
    return *d;
  }

  Result<int64_t> IntAt(const YAML::Node& map, const std::string& key, bool required, int64_t lo,
                        int64_t hi, int64_t fallback = 0) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "' (an integer)");
      return fallback;
    }
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) {
      return Error(n, "'" + key + "' must be an integer");
    }
    if (v < lo || v > hi) {
      return Error(n, "'" + key + "' must be between " + std::to_string(lo) + " and " +
                          std::to_string(hi) + " (got " + std::to_string(v) + ")");
    }
    return v;
  }

  Result<std::string> StringAt(const YAML::Node& map, const std::string& key, bool required,
                               std::string fallback = "") const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "'");
      return fallback;
    }
    if (!n.IsScalar()) return Error(n, "'" + key + "' must be a string");
    return n.Scalar();
  }

  Result<Scenario> Read(const YAML::Node& root);

 private:
  Status ReadNodes(const YAML::Node& n, Scenario& s) const;
  Status ReadLatency(const YAML::Node& n, Scenario& s) const;
  Status ReadLimiter(const YAML::Node& n, Scenario& s) const;
  Status ReadTraffic(const YAML::Node& n, Scenario& s) const;
  Status ReadFault(const YAML::Node& n, Scenario& s) const;
  Status ReadChecks(const YAML::Node& n, Scenario& s) const;

  std::string source_;
};

#define RL_ASSIGN(lhs, expr)                    \
  do {                                          \
    auto result_ = (expr);                      \
    if (!result_.ok()) return result_.status(); \
    lhs = *std::move(result_);                  \
  } while (0)

#define RL_RETURN_IF_ERROR(expr)       \
  do {                                 \
    Status status_ = (expr);           \
    if (!status_.ok()) return status_; \
  } while (0)

Result<Scenario> ScenarioReader::Read(const YAML::Node& root) {
  if (!root.IsMap()) return Error(root, "a scenario must be a mapping of keys such as limiters:");
  RL_RETURN_IF_ERROR(OnlyKeys(root, "the scenario",
                              {"name", "description", "seed", "nodes", "latency", "buggify",
                               "limiters", "claim", "traffic", "faults", "checks"}));
  Scenario s;
  RL_ASSIGN(s.name, StringAt(root, "name", false, "unnamed"));
  RL_ASSIGN(s.description, StringAt(root, "description", false));
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

  const YAML::Node limiters = root["limiters"];
  if (!limiters || !limiters.IsSequence() || limiters.size() == 0) {
    return Error(limiters ? limiters : root, "'limiters' must list at least one limiter");
  }
  for (const YAML::Node& l : limiters) RL_RETURN_IF_ERROR(ReadLimiter(l, s));

  if (const YAML::Node claim = root["claim"]) {
    RL_RETURN_IF_ERROR(OnlyKeys(claim, "claim", {"limit", "window"}));
    RL_ASSIGN(s.claim_limit, IntAt(claim, "limit", true, 1, int64_t{1} << 40));
    RL_ASSIGN(s.claim_window, DurationAt(claim, "window", true));
  } else {
    // The first window limiter's promise; for buckets, the burst over burst intervals.
    const Policy& p = s.limiters.front().policy;
    s.claim_limit = p.limit;
    s.claim_window = p.IsBucket() ? p.limit * p.window : p.window;
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
  if (const YAML::Node checks = root["checks"]) RL_RETURN_IF_ERROR(ReadChecks(checks, s));
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

Status ScenarioReader::ReadLimiter(const YAML::Node& n, Scenario& s) const {
  RL_RETURN_IF_ERROR(
      OnlyKeys(n, "a limiter", {"protocol", "algorithm", "limit", "window", "burst", "interval"}));
  std::string name;
  RL_ASSIGN(name, StringAt(n, "algorithm", true));
  const std::optional<Algorithm> a = AlgorithmFromName(name);
  if (!a) {
    return Error(n["algorithm"], "unknown algorithm '" + name +
                                     "' (expected fixed-window, sliding-log, sliding-counter, "
                                     "token-bucket or gcra)");
  }
  LimiterSpec spec;
  spec.policy.algorithm = *a;
  if (Describe(*a).bucket) {
    RL_ASSIGN(spec.policy.limit, IntAt(n, "burst", true, 1, int64_t{1} << 40));
    RL_ASSIGN(spec.policy.window, DurationAt(n, "interval", true));
  } else {
    RL_ASSIGN(spec.policy.limit, IntAt(n, "limit", true, 1, int64_t{1} << 40));
    RL_ASSIGN(spec.policy.window, DurationAt(n, "window", true));
  }
  if (std::optional<std::string> problem = spec.policy.Problem()) return Error(n, *problem);
  RL_ASSIGN(spec.protocol, StringAt(n, "protocol", false, "memory-" + name));
  bool known = false;
  for (const ProtocolInfo& p : Protocols()) {
    if (p.name == spec.protocol) {
      known = true;
      if (p.algorithm != name) {
        return Error(n["protocol"], "protocol '" + spec.protocol + "' implements " +
                                        std::string(p.algorithm) + ", not " + name);
      }
    }
  }
  if (!known) {
    return Error(n["protocol"],
                 "unknown protocol '" + spec.protocol + "' (see `ratelab list protocols`)");
  }
  s.limiters.push_back(spec);
  return absl::OkStatus();
}

Status ScenarioReader::ReadTraffic(const YAML::Node& n, Scenario& s) const {
  std::string type;
  if (!n.IsMap()) return Error(n, "a traffic generator must be a mapping with a 'type'");
  RL_ASSIGN(type, StringAt(n, "type", true));
  if (type == "constant") {
    RL_RETURN_IF_ERROR(
        OnlyKeys(n, "constant traffic", {"type", "user", "start", "interval", "count"}));
    std::string user;
    Duration start, interval;
    int64_t count = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(interval, DurationAt(n, "interval", true));
    RL_ASSIGN(count, IntAt(n, "count", true, 1, 10'000'000));
    s.traffic.push_back(std::make_unique<ConstantTraffic>(user, s.start + start, interval, count));
  } else if (type == "boundary-attack") {
    RL_RETURN_IF_ERROR(
        OnlyKeys(n, "boundary-attack traffic", {"type", "user", "edge", "spread", "per_side"}));
    std::string user;
    Duration edge, spread;
    int64_t per_side = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(edge, DurationAt(n, "edge", true));
    RL_ASSIGN(spread, DurationAt(n, "spread", true));
    RL_ASSIGN(per_side, IntAt(n, "per_side", true, 1, 10'000'000));
    s.traffic.push_back(
        std::make_unique<BoundaryAttackTraffic>(user, s.start + edge, spread, per_side));
  } else if (type == "burst") {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "burst traffic", {"type", "user", "at", "count"}));
    std::string user;
    Duration at;
    int64_t count = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(at, DurationAt(n, "at", true));
    RL_ASSIGN(count, IntAt(n, "count", true, 1, 10'000'000));
    s.traffic.push_back(std::make_unique<BurstTraffic>(user, s.start + at, count));
  } else if (type == "zipf-users") {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "zipf-users traffic",
                                {"type", "users", "exponent", "start", "duration", "mean_gap"}));
    int64_t users = 0;
    Duration start, duration, mean_gap;
    double exponent = 1.0;
    RL_ASSIGN(users, IntAt(n, "users", true, 1, 100'000'000));
    if (const YAML::Node e = n["exponent"];
        e && (!YAML::convert<double>::decode(e, exponent) || exponent < 0 || exponent > 10)) {
      return Error(e, "'exponent' must be a number from 0 to 10");
    }
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(duration, DurationAt(n, "duration", true));
    RL_ASSIGN(mean_gap, DurationAt(n, "mean_gap", true));
    if (mean_gap.count() <= 0) return Error(n["mean_gap"], "'mean_gap' must be positive");
    s.traffic.push_back(
        std::make_unique<ZipfUsersTraffic>(users, exponent, s.start + start, duration, mean_gap));
  } else {
    return Error(n["type"], "unknown traffic type '" + type +
                                "' (expected constant, boundary-attack, burst or zipf-users)");
  }
  return absl::OkStatus();
}

Status ScenarioReader::ReadFault(const YAML::Node& n, Scenario& s) const {
  if (!n.IsMap()) return Error(n, "a fault must be a mapping with a 'type'");
  std::string type;
  RL_ASSIGN(type, StringAt(n, "type", true));
  FaultSpec f;
  if (type == "crash") {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "a crash fault", {"type", "node", "at", "down_for"}));
    f.kind = FaultSpec::Kind::kCrash;
    RL_ASSIGN(f.amount, DurationAt(n, "down_for", false));
  } else if (type == "clock-jump") {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "a clock-jump fault", {"type", "node", "at", "by"}));
    f.kind = FaultSpec::Kind::kClockJump;
    RL_ASSIGN(f.amount, DurationAt(n, "by", true));
  } else {
    return Error(n["type"], "unknown fault type '" + type + "' (expected crash or clock-jump)");
  }
  int64_t node = 0;
  RL_ASSIGN(node, IntAt(n, "node", true, 0, static_cast<int64_t>(s.nodes.size()) - 1));
  f.node = static_cast<int>(node);
  RL_ASSIGN(f.at, DurationAt(n, "at", true));
  s.faults.push_back(f);
  return absl::OkStatus();
}

Status ScenarioReader::ReadChecks(const YAML::Node& n, Scenario& s) const {
  if (!n.IsSequence() || n.size() == 0) return Error(n, "'checks' must be a non-empty list");
  s.checks.clear();
  for (const YAML::Node& c : n) {
    const std::string name = c.IsScalar() ? c.Scalar() : "";
    bool known = name == "promise";
    for (const OracleInfo& o : Oracles())
      known = known || (o.name == name && name != "boundary-burst");
    if (!known) {
      return Error(c, "unknown check '" + name +
                          "' (expected promise, aligned-window-cap, any-window-cap, "
                          "bucket-conformance, false-denials or retry-after; the boundary-burst "
                          "ratio is always reported)");
    }
    s.checks.push_back(name);
  }
  return absl::OkStatus();
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& source) {
  try {
    return ScenarioReader(source).Read(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path + ": cannot open the scenario file");
  std::ostringstream text;
  text << in.rdbuf();
  return ParseScenario(text.str(), path);
}

}  // namespace ratelab
