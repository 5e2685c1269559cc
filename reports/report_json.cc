// The report model to JSON and back (report_model.h). Field by field, the one place the JSON
// layout is written down; every writer and reader of a report goes through here.
#include "reports/json_reader.h"
#include "reports/report_model.h"

namespace ratelab {

namespace {

using json = nlohmann::json;

json ToJson(const CheckCount& c);
json ToJson(const LimiterReport& l);
json ToJson(const UserReport& u);
json ToJson(const SeedReport& s);

template <typename T>
json Array(const std::vector<T>& items) {
  json out = json::array();
  for (const T& item : items) out.push_back(ToJson(item));
  return out;
}

json ToJson(const CheckCount& c) { return ToJsonValue(c); }

json ToJson(const MetricsReport& m) { return ToJsonValue(m); }

json ToJson(const SeriesReport& s) { return ToJsonValue(s); }

json ToJson(const LimiterReport& l) {
  json out = {{"name", l.name},
              {"protocol", l.protocol},
              {"policy", l.policy},
              {"offered", l.offered},
              {"admitted", l.admitted},
              {"denied", l.denied},
              {"unanswered", l.unanswered},
              {"max_in_any_window", l.max_in_any_window},
              {"history_hash", l.history_hash},
              {"metrics", ToJson(l.metrics)},
              {"series", ToJson(l.series)},
              {"checks", Array(l.checks)},
              {"violations", Array(l.violations)}};
  if (l.algorithm) out["algorithm"] = std::string(AlgorithmName(*l.algorithm));
  if (l.failed > 0) {
    out["failed"] = l.failed;
    out["failure"] = l.failure;
  }
  return out;
}

json ToJson(const UserReport& u) { return ToJsonValue(u); }

json ToJson(const SeedsSpreadReport& s) { return ToJsonValue(s); }

json ToJson(const SeedReport& s) {
  json out = {{"seed", s.seed}, {"history_hash", s.history_hash}, {"violations", s.violations}};
  if (s.failed > 0) out["failed"] = s.failed;
  return out;
}

// Readers, each of one concept, from a JsonReader placed on it.

WitnessEvent ReadWitnessEvent(const JsonReader& r) {
  WitnessEvent e;
  ReadJsonValue(r, e);
  return e;
}

ViolationReport ReadViolation(const JsonReader& r) {
  ViolationReport v;
  ReadJsonValue(r, v);
  return v;
}

FaultReport ReadFault(const JsonReader& r) {
  FaultReport f;
  ReadJsonValue(r, f);
  return f;
}

LimiterReport ReadLimiter(const JsonReader& r, uint64_t bins) {
  LimiterReport l;
  l.name = r.Field("name").String();
  l.protocol = r.Field("protocol").String();
  l.policy = r.Field("policy").String();
  if (const std::optional<JsonReader> algorithm = r.OptionalField("algorithm")) {
    const std::string name = algorithm->String();
    l.algorithm = AlgorithmNamed(name);
    if (!l.algorithm) algorithm->Report("unknown algorithm '" + name + "'");
  }
  l.offered = r.Field("offered").Int();
  l.admitted = r.Field("admitted").Int();
  l.denied = r.Field("denied").Int();
  l.unanswered = r.Field("unanswered").Int();
  l.max_in_any_window = r.Field("max_in_any_window").Int();
  l.history_hash = r.Field("history_hash").String();
  ReadJsonValue(r.Field("metrics"), l.metrics);
  const JsonReader series = r.Field("series");
  ReadJsonValue(series, l.series);
  // One value a time bin.
  std::apply(
      [&](const auto&... f) {
        const auto check = [&](const auto& field) {
          const size_t found = (l.series.*(field.member)).size();
          if (found != bins) {
            series.Field(field.name)
                .Report("expected " + std::to_string(bins) + " values (one a time bin), found " +
                        std::to_string(found));
          }
        };
        (check(f), ...);
      },
      JsonFields(static_cast<const SeriesReport*>(nullptr)));
  ReadJsonValue(r.Field("checks"), l.checks);
  for (const JsonReader& v : r.Field("violations").Elements()) {
    l.violations.push_back(ReadViolation(v));
  }
  if (r.Has("failed")) {
    l.failed = r.Field("failed").Int();
    l.failure = r.Field("failure").String();
  }
  return l;
}

RunReport ReadRun(const JsonReader& r) {
  RunReport run;
  run.scenario = r.Field("scenario").String();
  run.description = r.Field("description").String();
  run.seed = r.Field("seed").Unsigned();
  run.history_hash = r.Field("history_hash").String();
  run.buggify = r.Field("buggify").Bool();
  if (const std::optional<JsonReader> start = r.OptionalField("start")) {
    run.start = ParseInstant(start->String());
    if (!run.start) start->Report("expected a UTC time such as 2026-01-01T00:00:00Z");
  }
  if (const std::optional<JsonReader> zone = r.OptionalField("utc_offset")) {
    run.utc_offset = ParseUtcOffset(zone->String());
    if (!run.utc_offset) zone->Report("expected an offset from UTC such as +01:00");
  }
  const JsonReader claim = r.Field("claim");
  run.claim = {claim.Field("limit").Int(), claim.Field("window").String(),
               claim.Field("window_ms").Number()};
  run.traffic = r.Field("traffic").Strings();
  for (const JsonReader& f : r.Field("faults").Elements()) run.faults.push_back(ReadFault(f));
  run.notes = r.Field("notes").Strings();
  const JsonReader bins = r.Field("bins");
  // Bins as a run makes them (at most 120 of them, each from a millisecond to a year wide), with
  // room to spare: a report whose bins would make its plots run forever is refused.
  run.bins = {bins.Field("width").String(), bins.Field("width_ms").NumberIn(1e-6, 3.2e10),
              bins.Field("count").UnsignedUpTo(100'000)};
  if (const std::optional<JsonReader> start = bins.OptionalField("start_s")) {
    ReadSecondsFromStart(*start, run.bins.start_s);
  }
  ReadJsonValue(r.Field("users"), run.users);
  for (const JsonReader& l : r.Field("limiters").Elements()) {
    run.limiters.push_back(ReadLimiter(l, run.bins.count));
  }
  const std::vector<JsonReader> users = r.Field("users").Elements();
  for (size_t i = 0; i < users.size() && i < run.users.size(); ++i) {
    if (run.users[i].admitted.size() != run.limiters.size()) {
      users[i]
          .Field("admitted")
          .Report("expected " + std::to_string(run.limiters.size()) +
                  " values (one a limiter), found " + std::to_string(run.users[i].admitted.size()));
    }
  }
  if (const std::optional<JsonReader> reproduce = r.OptionalField("reproduce")) {
    run.reproduce = reproduce->String();
  }
  if (const std::optional<JsonReader> seeds = r.OptionalField("across_seeds")) {
    ReadJsonValue(*seeds, run.across_seeds.emplace());
  }
  return run;
}

}  // namespace

void ReadSecondsFromStart(const JsonReader& r, double& seconds) {
  constexpr double kMostSeconds = 3e10;
  seconds = r.NumberIn(-kMostSeconds, kMostSeconds);
}

json ToJson(const WitnessEvent& e) { return ToJsonValue(e); }

json ToJson(const ViolationReport& v) { return ToJsonValue(v); }

json ToJson(const FaultReport& f) { return ToJsonValue(f); }

std::string JsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

json ToJson(const RunReport& r) {
  json out = {
      {"scenario", r.scenario},
      {"description", r.description},
      {"seed", r.seed},
      {"history_hash", r.history_hash},
      {"buggify", r.buggify},
      {"claim",
       {{"limit", r.claim.limit}, {"window", r.claim.window}, {"window_ms", r.claim.window_ms}}},
      {"traffic", r.traffic},
      {"faults", Array(r.faults)},
      {"notes", r.notes},
      {"bins",
       {{"width", r.bins.width},
        {"width_ms", r.bins.width_ms},
        {"count", r.bins.count},
        {"start_s", r.bins.start_s}}},
      {"users", Array(r.users)},
      {"limiters", Array(r.limiters)}};
  if (r.start) out["start"] = FormatUtc(*r.start);
  if (r.utc_offset) out["utc_offset"] = FormatUtcOffset(*r.utc_offset);
  if (r.reproduce) out["reproduce"] = *r.reproduce;
  if (r.across_seeds) out["across_seeds"] = ToJson(*r.across_seeds);
  return out;
}

json ToJson(const SweepReport& s) {
  json out = {{"scenario", s.scenario},
              {"seeds", Array(s.seeds)},
              {"seeds_with_violations", s.seeds_with_violations},
              {"first_failing", s.first_failing ? ToJson(*s.first_failing) : json()}};
  if (!s.shard.empty()) out["shard"] = s.shard;
  if (!s.reproduce.empty()) out["reproduce"] = s.reproduce;
  return out;
}

json ToJson(const CheckReport& c) {
  json out = {{"protocol", c.protocol},
              {"policy", c.policy},
              {"verdict", c.verdict},
              {"seeds_searched", c.seeds_searched}};
  if (!c.shard.empty()) out["shard"] = c.shard;
  if (!c.clock.empty()) out["clock"] = c.clock;
  if (c.failed_request || c.violation) out["start"] = FormatUtc(c.start);
  if (c.failed_request) {
    out["seed"] = c.seed;
    out["failure"] = c.failure;
    out["request"] = ToJson(*c.failed_request);
    out["reproduce"] = c.reproduce;
  } else if (c.violation) {
    out["seed"] = c.seed;
    out["requests"] = c.requests;
    out["drawn_requests"] = c.drawn_requests;
    out["nodes"] = c.nodes;
    out["violation"] = ToJson(*c.violation);
    out["faults"] = Array(c.faults);
    out["reproduce"] = c.reproduce;
  } else {
    out["checks"] = c.checks;
    out["faults"] = c.fault_kinds;
  }
  return out;
}

json ToJson(const StressReport& s) {
  json out = {
      {"protocol", s.protocol},
      {"store", s.store},
      {"policy", s.policy},
      {"threads", s.threads},
      {"users", s.users},
      {"duration_s", s.duration_s},
      {"answered", s.answered},
      {"admitted", s.admitted},
      {"denied", s.denied},
      {"per_second", s.per_second},
      {"latency_ms", {{"p50", s.latency_p50_ms}, {"p99", s.latency_p99_ms}}},
      {"busiest_key",
       {{"key", s.busiest_key}, {"admitted", s.busiest_admitted}, {"allowed", s.busiest_allowed}}},
      {"checks", json::array()},
      {"violations", Array(s.violations)}};
  out["checks"].push_back(
      {{"name", InvariantName(s.promise)}, {"violations", s.violations.size()}});
  if (const std::optional<StressLinearizability>& l = s.linearizability) {
    out["checks"].push_back({{"name", "linearizable"},
                             {"verdict", l->verdict},
                             {"calls", l->calls},
                             {"keys", l->keys},
                             {"states", l->states},
                             {"unknown_keys", l->unknown_keys},
                             {"lead", l->lead},
                             {"violations", l->violation ? 1 : 0}});
    // Every violation found, the promise's then this one's.
    if (l->violation) out["violations"].push_back(ToJson(*l->violation));
  }
  if (!s.failure.empty()) out["failure"] = s.failure;  // then nothing was judged
  return out;
}

Result<RunReport> RunReportFromJson(const json& j) {
  const JsonReader r(j);
  RunReport run = ReadRun(r);
  if (Status s = r.status(); !s.ok()) return s;
  return run;
}

Result<SweepReport> SweepReportFromJson(const json& j) {
  const JsonReader r(j);
  SweepReport s;
  s.scenario = r.Field("scenario").String();
  for (const JsonReader& seed : r.Field("seeds").Elements()) {
    s.seeds.push_back({seed.Field("seed").Unsigned(), seed.Field("history_hash").String(),
                       seed.Field("violations").Int(),
                       seed.Has("failed") ? seed.Field("failed").Int() : 0});
  }
  s.seeds_with_violations = r.Field("seeds_with_violations").Unsigned();
  if (const std::optional<JsonReader> shard = r.OptionalField("shard")) s.shard = shard->String();
  if (const std::optional<JsonReader> reproduce = r.OptionalField("reproduce")) {
    s.reproduce = reproduce->String();
  }
  if (const std::optional<JsonReader> first = r.OptionalField("first_failing")) {
    s.first_failing = ReadRun(*first);
  } else {
    (void)r.Field("first_failing");  // present, as null
  }
  if (Status status = r.status(); !status.ok()) return status;
  return s;
}

std::string ReproduceSeed(const SweepReport& sweep, uint64_t seed) {
  std::string out = sweep.reproduce;
  const size_t at = out.find(kSeedPlaceholder);
  if (at != std::string::npos) {
    out.replace(at, std::char_traits<char>::length(kSeedPlaceholder), std::to_string(seed));
  }
  return out;
}

Result<CheckReport> CheckReportFromJson(const json& j) {
  const JsonReader r(j);
  CheckReport c;
  c.protocol = r.Field("protocol").String();
  c.policy = r.Field("policy").String();
  c.verdict = r.Field("verdict").String();
  c.seeds_searched = r.Field("seeds_searched").Unsigned();
  if (const std::optional<JsonReader> shard = r.OptionalField("shard")) c.shard = shard->String();
  if (const std::optional<JsonReader> clock = r.OptionalField("clock")) c.clock = clock->String();
  if (const std::optional<JsonReader> start = r.OptionalField("start")) {
    const std::optional<Instant> at = ParseInstant(start->String());
    if (!at) start->Report("expected a UTC time such as 2026-01-01T00:00:00Z");
    c.start = at.value_or(Instant{});
  }
  if (c.verdict == "failure") {
    c.seed = r.Field("seed").Unsigned();
    c.failure = r.Field("failure").String();
    c.failed_request = ReadWitnessEvent(r.Field("request"));
    c.reproduce = r.Field("reproduce").String();
  } else if (c.verdict == "violation") {
    c.seed = r.Field("seed").Unsigned();
    c.requests = r.Field("requests").Unsigned();
    c.drawn_requests = r.Field("drawn_requests").Unsigned();
    c.nodes = r.Field("nodes").Unsigned();
    c.violation = ReadViolation(r.Field("violation"));
    for (const JsonReader& f : r.Field("faults").Elements()) c.faults.push_back(ReadFault(f));
    c.reproduce = r.Field("reproduce").String();
  } else if (c.verdict == "none") {
    for (const JsonReader& check : r.Field("checks").Elements()) c.checks.push_back(check.String());
    c.fault_kinds = r.Field("faults").String();
  } else {
    r.Field("verdict").Report("expected violation, failure or none");
  }
  if (Status status = r.status(); !status.ok()) return status;
  return c;
}

}  // namespace ratelab
