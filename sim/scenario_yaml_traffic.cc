// The scenario format's traffic generators (docs/scenarios.md).
#include <algorithm>
#include <chrono>

#include "sim/internal/scenario_reader.h"
#include "sim/log_replay.h"

namespace ratelab::internal {

Status ScenarioReader::ReadTraffic(const YAML::Node& n, Scenario& s) const {
  std::string type;
  if (!n.IsMap()) return Error(n, "a traffic generator must be a mapping with a 'type'");
  RL_ASSIGN(type, StringAt(n, "type", true));
  const std::optional<TrafficKind> kind = Named<TrafficInfo>(kTrafficKinds, type);
  if (!kind) {
    return Error(n["type"], "unknown traffic type '" + type + "' (expected " +
                                NameChoices<TrafficInfo>(kTrafficKinds) + ")");
  }
  if (kind == TrafficKind::kReplay) return ReadReplay(n, s);
  // Every generator but a replay (whose log names each request's endpoint) may say where its
  // requests go.
  std::string endpoint;
  RL_ASSIGN(endpoint, StringAt(n, "endpoint", false));
  if (n["endpoint"] && (endpoint.empty() || endpoint.size() > kMaxRuleText)) {
    return Error(n["endpoint"], "'endpoint' must be a path such as /api/search, at most " +
                                    std::to_string(kMaxRuleText) + " bytes");
  }
  if (kind == TrafficKind::kConstant) {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "constant traffic",
                                {"type", "user", "start", "interval", "count", "endpoint"}));
    std::string user;
    Duration start, interval;
    int64_t count = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(interval, DurationAt(n, "interval", true));
    RL_ASSIGN(count, IntAt(n, "count", true, 1, 10'000'000));
    s.traffic.push_back(std::make_unique<ConstantTraffic>(user, s.start + start, interval, count));
  } else if (kind == TrafficKind::kBoundaryAttack) {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "boundary-attack traffic",
                                {"type", "user", "edge", "spread", "per_side", "endpoint"}));
    std::string user;
    Duration edge, spread;
    int64_t per_side = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(edge, DurationAt(n, "edge", true));
    RL_ASSIGN(spread, DurationAt(n, "spread", true));
    RL_ASSIGN(per_side, IntAt(n, "per_side", true, 1, 10'000'000));
    s.traffic.push_back(
        std::make_unique<BoundaryAttackTraffic>(user, s.start + edge, spread, per_side));
  } else if (kind == TrafficKind::kBurst) {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "burst traffic", {"type", "user", "at", "count", "endpoint"}));
    std::string user;
    Duration at;
    int64_t count = 0;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(at, DurationAt(n, "at", true));
    RL_ASSIGN(count, IntAt(n, "count", true, 1, 10'000'000));
    s.traffic.push_back(std::make_unique<BurstTraffic>(user, s.start + at, count));
  } else if (kind == TrafficKind::kZipfUsers) {
    RL_RETURN_IF_ERROR(
        OnlyKeys(n, "zipf-users traffic",
                 {"type", "users", "exponent", "start", "duration", "mean_gap", "endpoint"}));
    int64_t users = 0;
    Duration start, duration, mean_gap;
    double exponent = 1.0;
    RL_ASSIGN(users, IntAt(n, "users", true, 1, 100'000'000));
    if (const YAML::Node e = n["exponent"];
        e && (!YAML::convert<double>::decode(e, exponent) || !(exponent >= 0 && exponent <= 10))) {
      return Error(e, "'exponent' must be a number from 0 to 10");
    }
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(duration, DurationAt(n, "duration", true));
    RL_ASSIGN(mean_gap, DurationAt(n, "mean_gap", true));
    if (mean_gap.count() <= 0) return Error(n["mean_gap"], "'mean_gap' must be positive");
    s.traffic.push_back(
        std::make_unique<ZipfUsersTraffic>(users, exponent, s.start + start, duration, mean_gap));
  } else if (kind == TrafficKind::kPoisson) {
    RL_RETURN_IF_ERROR(OnlyKeys(n, "poisson traffic",
                                {"type", "user", "start", "duration", "mean_gap", "endpoint"}));
    std::string user;
    Duration start, duration, mean_gap;
    RL_ASSIGN(user, StringAt(n, "user", true));
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(duration, DurationAt(n, "duration", true));
    RL_ASSIGN(mean_gap, DurationAt(n, "mean_gap", true));
    if (mean_gap.count() <= 0) return Error(n["mean_gap"], "'mean_gap' must be positive");
    s.traffic.push_back(
        std::make_unique<PoissonTraffic>(user, s.start + start, duration, mean_gap));
  } else if (kind == TrafficKind::kDiurnal) {
    RL_RETURN_IF_ERROR(OnlyKeys(
        n, "diurnal traffic",
        {"type", "users", "start", "duration", "peak_gap", "period", "trough", "endpoint"}));
    int64_t users = 0;
    Duration start, duration, peak_gap, period;
    double trough = 0.2;
    RL_ASSIGN(users, IntAt(n, "users", true, 1, 100'000'000));
    RL_ASSIGN(start, DurationAt(n, "start", false));
    RL_ASSIGN(duration, DurationAt(n, "duration", true));
    RL_ASSIGN(peak_gap, DurationAt(n, "peak_gap", true));
    RL_ASSIGN(period, DurationAt(n, "period", false, std::chrono::hours(24)));
    if (peak_gap.count() <= 0) return Error(n["peak_gap"], "'peak_gap' must be positive");
    if (period.count() <= 0) return Error(n["period"], "'period' must be positive");
    if (const YAML::Node t = n["trough"];
        t && (!YAML::convert<double>::decode(t, trough) || !(trough >= 0 && trough <= 1))) {
      return Error(t, "'trough' must be a number from 0 to 1 (a fraction of the peak rate)");
    }
    s.traffic.push_back(std::make_unique<DiurnalTraffic>(users, s.start + start, duration, peak_gap,
                                                         period, trough));
  }
  if (n["endpoint"]) {
    s.traffic.back() = std::make_unique<EndpointTraffic>(std::move(s.traffic.back()), endpoint);
  }
  return absl::OkStatus();
}

Status ScenarioReader::ReadReplay(const YAML::Node& n, Scenario& s) const {
  RL_RETURN_IF_ERROR(OnlyKeys(n, "replay traffic", {"type", "file", "format"}));
  std::string file, format_name;
  RL_ASSIGN(file, StringAt(n, "file", true));
  RL_ASSIGN(format_name, StringAt(n, "format", false, "auto"));
  const std::optional<LogFormat> format = LogFormatNamed(format_name);
  if (!format) {
    return Error(n["format"], "unknown log format '" + format_name +
                                  "' (expected auto, csv, common or combined)");
  }
  // A relative path is relative to the scenario file.
  Result<AccessLog> log = LoadAccessLog(Beside(file), *format);
  if (!log.ok()) return Error(n["file"], std::string(log.status().message()));
  // A scenario without a `start` of its own that opens with a log starts at midnight of the log's
  // first day in the log's own zone, and shows its times in that zone, so its witnesses and plots
  // keep the log's dates and times.
  if (!start_given_ && s.traffic.empty()) {
    const Instant first =
        std::min_element(log->arrivals.begin(), log->arrivals.end(),
                         [](const Arrival& a, const Arrival& b) { return a.at < b.at; })
            ->at;
    const Duration offset = log->utc_offset.value_or(Duration::zero());
    s.start = std::chrono::floor<std::chrono::days>(first + offset) - offset;
    if (offset != Duration::zero()) s.utc_offset = offset;
  }
  ShiftToDayOf(log->arrivals, s.start);
  s.traffic.push_back(std::make_unique<ReplayTraffic>(file, std::move(log->arrivals)));
  return absl::OkStatus();
}

}  // namespace ratelab::internal
