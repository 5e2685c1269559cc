// The report model: what ratelab reports, as data, one type per concept, each with one way to
// JSON (ToJson) and one way back (FromJson, naming the path of the first problem).
//
//   RunReport      a run of a scenario from one seed: report.json (compare, demo), run --json,
//                  result.json of run --out; every number a view (HTML, Markdown, JUnit, plots)
//                  shows is in it, so `ratelab report` rebuilds them from the file alone; with
//                  compare --seeds, also every seed's numbers (SeedsSpreadReport)
//   SweepReport    a sweep over seeds (run --seeds), with its first failing run
//   CheckReport    what `ratelab check` found (check --json)
//   StressReport   what `ratelab stress` measured and found (stress --json)
// (and, in their own headers, ProbeReport and WorstReport); reports/any_report.h reads whichever
// a file holds.
//
// A violation (ViolationReport) and its witness (WitnessEvent) have one shape everywhere.
// Times are FormatInstant strings, or seconds since the run's start (fields ending in `_s`);
// durations are milliseconds (fields ending in `_ms`).
#ifndef RATELAB_REPORTS_REPORT_MODEL_H_
#define RATELAB_REPORTS_REPORT_MODEL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "impl/core/status.h"
#include "model/check_id.h"
#include "model/named.h"
#include "model/policy.h"
#include "reports/fields.h"

namespace ratelab {

// Seconds since a run's start, as a report holds them: within about 126 years either way, so
// that any two are nanoseconds apart that an int64 holds, and so is a run's start plus any (the
// report fuzzer found two a thousand years apart, whose difference the views took as a
// Duration). The optional one reads null as none.
inline constexpr double kMostSecondsFromStart = 4e9;
void ReadSecondsFromStart(const JsonReader& r, double& seconds);
void ReadOptionalSecondsFromStart(const JsonReader& r, std::optional<double>& seconds);

// A store step of a witness's request, and when it took effect.
struct WitnessStep {
  std::string label;  // "INCR rl:{user:u1:/api}"
  double at_s = 0;
};
constexpr auto JsonFields(const WitnessStep*) {
  return std::tuple{JsonField("label", &WitnessStep::label),
                    JsonField("at_s", &WitnessStep::at_s, ReadSecondsFromStart)};
}

// A request of a witness: {"id", "key", "node", "cost", "at", "outcome", "invoke_s",
// "complete_s" (null: never answered), "steps": [{"label", "at_s"}]}.
struct WitnessEvent {
  int64_t id = 0;
  std::string key;
  int64_t node = 0;  // the node (simulation) or thread (stress) that sent it
  int64_t cost = 1;
  std::string at;                    // when its decision took effect (FormatInstant)
  std::string outcome;               // "admitted", "denied, retry after 1s" or "no answer"
  double invoke_s = 0;               // sent
  std::optional<double> complete_s;  // answered
  std::vector<WitnessStep> steps;
};
constexpr auto JsonFields(const WitnessEvent*) {
  using E = WitnessEvent;
  return std::tuple{JsonField("id", &E::id),
                    JsonField("key", &E::key),
                    JsonField("node", &E::node),
                    JsonField("cost", &E::cost),
                    JsonField("at", &E::at),
                    JsonField("outcome", &E::outcome),
                    JsonField("invoke_s", &E::invoke_s, ReadSecondsFromStart),
                    JsonField("complete_s", &E::complete_s, ReadOptionalSecondsFromStart),
                    JsonField("steps", &E::steps)};
}

// The window a witness's admissions fell in (Violation::Window): {"from_s", "to_s", "closed",
// "span"}.
struct WindowReport {
  double from_s = 0, to_s = 0;
  bool closed = false;
  bool span = false;  // the span the admissions covered, not a window of the limiter's
};
constexpr auto JsonFields(const WindowReport*) {
  return std::tuple{JsonField("from_s", &WindowReport::from_s, ReadSecondsFromStart),
                    JsonField("to_s", &WindowReport::to_s, ReadSecondsFromStart),
                    JsonField("closed", &WindowReport::closed),
                    JsonField("span", &WindowReport::span)};
}

// The bucket a witness overdrew (Violation::Bucket): {"burst", "interval_ms"}.
struct BucketReport {
  int64_t burst = 0;
  double interval_ms = 0;
};
constexpr auto JsonFields(const BucketReport*) {
  return std::tuple{JsonField("burst", &BucketReport::burst),
                    JsonField("interval_ms", &BucketReport::interval_ms)};
}

// {"check", "invariant", "key", "summary", "witness": [WitnessEvent], "window": WindowReport,
// "bucket": BucketReport}
// Where the limiter's own aligned windows begin (Violation::Grid): {"first_s", "period_ms"}, the
// first edge at or after the report's start and the window's length.
struct GridReport {
  double first_s = 0;
  double period_ms = 0;
};
constexpr auto JsonFields(const GridReport*) {
  return std::tuple{JsonField("first_s", &GridReport::first_s, ReadSecondsFromStart),
                    JsonField("period_ms", &GridReport::period_ms)};
}

struct ViolationReport {
  // What found it: a scenario's check (the promise, a cap), a worst-case measure,
  // linearizability.
  CheckId check = CheckId::kPromise;
  CheckId invariant = CheckId::kAnyWindowCap;  // what it broke
  std::string key;
  std::string summary;
  std::vector<WitnessEvent> witness;
  // The window its admissions fell in, for a promise that counts them in one; none otherwise, or
  // in a report written before it was kept.
  std::optional<WindowReport> window = std::nullopt;
  // The bucket it overdrew, for a bucket's promise; none otherwise, or in a report written before
  // it was kept.
  std::optional<BucketReport> bucket = std::nullopt;
  // The limiter's own aligned windows, where it has them; none otherwise, or in a report written
  // before they were kept.
  std::optional<GridReport> grid = std::nullopt;
};
constexpr auto JsonFields(const ViolationReport*) {
  using V = ViolationReport;
  return std::tuple{JsonField("check", &V::check),
                    JsonField("invariant", &V::invariant),
                    JsonField("key", &V::key),
                    JsonField("summary", &V::summary),
                    JsonField("witness", &V::witness),
                    JsonField("window", &V::window).OrDefault(),
                    JsonField("bucket", &V::bucket).OrDefault(),
                    JsonField("grid", &V::grid).OrDefault()};
}

// A fault of a run: {"what", "from_s", "to_s"} (an instant fault has from_s == to_s).

struct FaultReport {
  std::string what;
  double from_s = 0;
  double to_s = 0;
};
constexpr auto JsonFields(const FaultReport*) {
  return std::tuple{JsonField("what", &FaultReport::what),
                    JsonField("from_s", &FaultReport::from_s, ReadSecondsFromStart),
                    JsonField("to_s", &FaultReport::to_s, ReadSecondsFromStart)};
}

// {"name", "violations"}: how many keys broke a check.
struct CheckCount {
  CheckId check = CheckId::kPromise;
  uint64_t violations = 0;
};
constexpr auto JsonFields(const CheckCount*) {
  return std::tuple{JsonField("name", &CheckCount::check),
                    JsonField("violations", &CheckCount::violations)};
}

struct LatencySummary {  // ms
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
};
constexpr auto JsonFields(const LatencySummary*) {
  using L = LatencySummary;
  return std::tuple{JsonField("p50", &L::p50), JsonField("p95", &L::p95), JsonField("p99", &L::p99),
                    JsonField("max", &L::max)};
}

// What a limiter decided for the requests sent during one fault.
struct FaultOutcomeReport {
  std::string fault;
  double from_s = 0, to_s = 0;
  int64_t offered = 0, admitted = 0, denied = 0, unanswered = 0;
};
constexpr auto JsonFields(const FaultOutcomeReport*) {
  using F = FaultOutcomeReport;
  return std::tuple{JsonField("fault", &F::fault),
                    JsonField("from_s", &F::from_s, ReadSecondsFromStart),
                    JsonField("to_s", &F::to_s, ReadSecondsFromStart),
                    JsonField("offered", &F::offered),
                    JsonField("admitted", &F::admitted),
                    JsonField("denied", &F::denied),
                    JsonField("unanswered", &F::unanswered)};
}

// reports/metrics.h says what each number means.
struct MetricsReport {
  int64_t over_admitted = 0;
  int64_t false_denials = 0;
  // What the exact limiter of the claim admits of the same traffic; none in a report written
  // before it was measured.
  std::optional<int64_t> exact_admitted;
  double burst_ratio = 0;
  std::optional<double> fairness;
  int64_t contended_users = 0;
  int64_t state_keys = 0;
  int64_t state_bytes = 0;
  std::optional<double> state_bytes_per_key;
  double steps_per_decision = 0;
  std::optional<LatencySummary> latency_ms;  // none when no decision took time
  std::vector<double> latency_cdf_ms;        // 101 percentiles, or none
  std::vector<FaultOutcomeReport> during_faults;
};
constexpr auto JsonFields(const MetricsReport*) {
  using M = MetricsReport;
  return std::tuple{JsonField("over_admitted", &M::over_admitted),
                    JsonField("false_denials", &M::false_denials),
                    JsonField("exact_admitted", &M::exact_admitted).OrDefault(),
                    JsonField("burst_ratio", &M::burst_ratio),
                    JsonField("fairness", &M::fairness),
                    JsonField("contended_users", &M::contended_users),
                    JsonField("state_keys", &M::state_keys),
                    JsonField("state_bytes", &M::state_bytes),
                    JsonField("state_bytes_per_key", &M::state_bytes_per_key),
                    JsonField("steps_per_decision", &M::steps_per_decision),
                    JsonField("latency_ms", &M::latency_ms),
                    JsonField("latency_cdf_ms", &M::latency_cdf_ms),
                    JsonField("during_faults", &M::during_faults)};
}

// Per time bin.
struct SeriesReport {
  std::vector<int64_t> offered, admitted, denied, unanswered, peak_in_window;
};
constexpr auto JsonFields(const SeriesReport*) {
  using S = SeriesReport;
  return std::tuple{JsonField("offered", &S::offered), JsonField("admitted", &S::admitted),
                    JsonField("denied", &S::denied), JsonField("unanswered", &S::unanswered),
                    JsonField("peak_in_window", &S::peak_in_window)};
}

struct ClaimReport;

struct LimiterReport {
  std::string name;
  std::string protocol;
  std::string policy;
  // The policy's algorithm ("algorithm": its name); none in a report written before it was.
  std::optional<Algorithm> algorithm;
  int64_t offered = 0, admitted = 0, denied = 0, unanswered = 0;
  int64_t max_in_any_window = 0;
  std::string history_hash;  // 16 hex digits
  MetricsReport metrics;
  SeriesReport series;
  std::vector<CheckCount> checks;  // in the scenario's order
  std::vector<ViolationReport> violations;
  // Requests the limiter answered with its own error, and the first of those errors, in words
  // ("#17 (user:u1:/api, node 2, sent at 12:00:01.000): lua:x.lua: the script failed: ...").
  int64_t failed = 0;
  std::string failure;

  // The keys on which it broke what it was held to: the claim check's (any-window-cap); where the
  // scenario gave no claim, its own promise's; in a report written before every run judged the
  // claim, one when any admission was past it.
  uint64_t ClaimBroken(const ClaimReport& claim) const;
};
inline nlohmann::json ToJsonValue(Algorithm a) { return std::string(AlgorithmName(a)); }
inline void ReadJsonValue(const JsonReader& r, Algorithm& a) {
  a = r.Named(Algorithms(), "algorithm");
}
constexpr auto JsonFields(const LimiterReport*) {
  using L = LimiterReport;
  return std::tuple{JsonField("name", &L::name),
                    JsonField("protocol", &L::protocol),
                    JsonField("policy", &L::policy),
                    JsonField("algorithm", &L::algorithm),
                    JsonField("offered", &L::offered),
                    JsonField("admitted", &L::admitted),
                    JsonField("denied", &L::denied),
                    JsonField("unanswered", &L::unanswered),
                    JsonField("max_in_any_window", &L::max_in_any_window),
                    JsonField("history_hash", &L::history_hash),
                    JsonField("metrics", &L::metrics),
                    JsonField("series", &L::series),
                    JsonField("checks", &L::checks),
                    JsonField("violations", &L::violations),
                    JsonField("failed", &L::failed).OrDefault(),
                    JsonField("failure", &L::failure).OrDefault()};
}

struct ClaimReport {
  int64_t limit = 0;
  std::string window;  // "1m"
  double window_ms = 0;
  // The scenario gave no claim: each limiter was held to its own promise alone, and `limit` in
  // any `window` (the first limiter's) is only the yardstick of the measures ("not_given"; false
  // in a report written before it was).
  bool not_given = false;
};
constexpr auto JsonFields(const ClaimReport*) {
  return std::tuple{JsonField("limit", &ClaimReport::limit),
                    JsonField("window", &ClaimReport::window),
                    JsonField("window_ms", &ClaimReport::window_ms),
                    JsonField("not_given", &ClaimReport::not_given).OrDefault()};
}

struct BinsReport {
  std::string width;  // "2s"
  double width_ms = 0;
  uint64_t count = 0;
  double start_s = 0;  // where the first begins ("start_s"; 0 in a report written before it was)
};
// Bins as a run makes them (at most 120 of them, each from a millisecond to a year wide), with
// room to spare: a report whose bins would make its plots run forever is refused.
void ReadBinWidthMs(const JsonReader& r, double& width_ms);
void ReadBinCount(const JsonReader& r, uint64_t& count);
constexpr auto JsonFields(const BinsReport*) {
  using B = BinsReport;
  return std::tuple{JsonField("width", &B::width),
                    JsonField("width_ms", &B::width_ms, ReadBinWidthMs),
                    JsonField("count", &B::count, ReadBinCount),
                    JsonField("start_s", &B::start_s, ReadSecondsFromStart).OrDefault()};
}

// One of the busiest users, with what each limiter admitted of theirs.
struct UserReport {
  std::string key;
  int64_t offered = 0;
  std::vector<int64_t> admitted;  // per limiter
};
constexpr auto JsonFields(const UserReport*) {
  return std::tuple{JsonField("key", &UserReport::key), JsonField("offered", &UserReport::offered),
                    JsonField("admitted", &UserReport::admitted)};
}

// A number of a limiter over the seeds of a comparison: {"median", "worst", "worst_seed"}, the
// worst being the largest (every number kept is a cost or a harm), the first seed that gave it.
struct SpreadReport {
  double median = 0;
  double worst = 0;
  uint64_t worst_seed = 0;
};
constexpr auto JsonFields(const SpreadReport*) {
  return std::tuple{JsonField("median", &SpreadReport::median),
                    JsonField("worst", &SpreadReport::worst),
                    JsonField("worst_seed", &SpreadReport::worst_seed)};
}

// {"name", "seeds", "first_seed"}: in how many seeds a check was broken, and the first of them.
struct CheckSeeds {
  CheckId check = CheckId::kPromise;
  uint64_t seeds = 0;
  uint64_t first_seed = 0;  // when seeds > 0
};
constexpr auto JsonFields(const CheckSeeds*) {
  return std::tuple{JsonField("name", &CheckSeeds::check), JsonField("seeds", &CheckSeeds::seeds),
                    JsonField("first_seed", &CheckSeeds::first_seed)};
}

// {"goal", "seeds"}: in how many seeds a limiter was picked for a goal (reports/goals.h).
struct GoalSeeds {
  std::string goal;
  uint64_t seeds = 0;
};
constexpr auto JsonFields(const GoalSeeds*) {
  return std::tuple{JsonField("goal", &GoalSeeds::goal), JsonField("seeds", &GoalSeeds::seeds)};
}

// A limiter over the seeds of a comparison.
struct LimiterSpreadReport {
  std::string name;
  std::vector<CheckSeeds> checks;  // in the scenario's order
  uint64_t seeds_over_claim = 0;   // seeds in which it broke the claim
  uint64_t seeds_failed = 0;       // seeds in which it answered a request with its own error
  uint64_t first_failed_seed = 0;  // when seeds_failed > 0
  SpreadReport over_admitted, false_denials, max_in_any_window, steps_per_decision;
  std::optional<SpreadReport> latency_p99_ms;  // none when no decision took time
  // Bytes of state per key; none where no run measured it, or in a report written before it was
  // kept.
  std::optional<SpreadReport> state_bytes_per_key = std::nullopt;
  // The goals it was picked for in some seed; none in a report written before they were counted.
  std::optional<std::vector<GoalSeeds>> picked;
};
constexpr auto JsonFields(const LimiterSpreadReport*) {
  using L = LimiterSpreadReport;
  return std::tuple{JsonField("name", &L::name),
                    JsonField("checks", &L::checks),
                    JsonField("seeds_over_claim", &L::seeds_over_claim),
                    JsonField("seeds_failed", &L::seeds_failed),
                    JsonField("first_failed_seed", &L::first_failed_seed),
                    JsonField("over_admitted", &L::over_admitted),
                    JsonField("false_denials", &L::false_denials),
                    JsonField("max_in_any_window", &L::max_in_any_window),
                    JsonField("steps_per_decision", &L::steps_per_decision),
                    JsonField("latency_p99_ms", &L::latency_p99_ms),
                    JsonField("picked", &L::picked).OrDefault(),
                    JsonField("state_bytes_per_key", &L::state_bytes_per_key).OrDefault()};
}

// A comparison over seeds (compare --seeds): {"first", "last", "count", "limiters", "traffics"};
// `count` is less than last - first + 1 when the runs were interrupted.
struct SeedsSpreadReport {
  uint64_t first = 0, last = 0, count = 0;
  std::vector<LimiterSpreadReport> limiters;
  // How many different traffics the seeds gave (a scenario that draws nothing of its traffic at
  // random gives one, whatever the seed); 0: not counted (a report written before it was).
  uint64_t traffics = 0;
};
constexpr auto JsonFields(const SeedsSpreadReport*) {
  using S = SeedsSpreadReport;
  return std::tuple{JsonField("first", &S::first), JsonField("last", &S::last),
                    JsonField("count", &S::count), JsonField("limiters", &S::limiters),
                    JsonField("traffics", &S::traffics).OrDefault()};
}

struct RunReport {
  std::string scenario;
  std::string description;
  uint64_t seed = 0;
  std::string history_hash;
  bool buggify = false;
  // The scenario's start ("start": FormatUtc), from which every `_s` field counts; none in a
  // report written before it was.
  std::optional<Instant> start;
  // The zone the scenario's times are shown in ("utc_offset": "+01:00", a replayed log's own);
  // none: UTC.
  std::optional<Duration> utc_offset;
  ClaimReport claim;
  std::vector<std::string> traffic;
  std::vector<FaultReport> faults;
  std::vector<std::string> notes;
  BinsReport bins;
  std::vector<UserReport> users;  // the busiest 20
  std::vector<LimiterReport> limiters;
  std::optional<std::string> reproduce;  // the command that makes the same run
  // When this run is one of a comparison over seeds: every seed's numbers ("across_seeds").
  std::optional<SeedsSpreadReport> across_seeds;
};
void ReadUtcOffset(const JsonReader& r, std::optional<Duration>& offset);
nlohmann::json WriteUtcOffset(const std::optional<Duration>& offset);
constexpr auto JsonFields(const RunReport*) {
  using R = RunReport;
  return std::tuple{JsonField("scenario", &R::scenario),
                    JsonField("description", &R::description),
                    JsonField("seed", &R::seed),
                    JsonField("history_hash", &R::history_hash),
                    JsonField("buggify", &R::buggify),
                    JsonField("start", &R::start),
                    JsonField("utc_offset", &R::utc_offset, ReadUtcOffset, WriteUtcOffset),
                    JsonField("claim", &R::claim),
                    JsonField("traffic", &R::traffic),
                    JsonField("faults", &R::faults),
                    JsonField("notes", &R::notes),
                    JsonField("bins", &R::bins),
                    JsonField("users", &R::users),
                    JsonField("limiters", &R::limiters),
                    JsonField("reproduce", &R::reproduce),
                    JsonField("across_seeds", &R::across_seeds)};
}
// Its fields, then that they agree: a value a time bin in each series, a value a limiter in each
// user's admissions.
void ReadJsonValue(const JsonReader& r, RunReport& run);

// One seed of a sweep.
struct SeedReport {
  uint64_t seed = 0;
  std::string history_hash;
  int64_t violations = 0;
  int64_t failed = 0;  // requests a limiter failed on
};
constexpr auto JsonFields(const SeedReport*) {
  return std::tuple{JsonField("seed", &SeedReport::seed),
                    JsonField("history_hash", &SeedReport::history_hash),
                    JsonField("violations", &SeedReport::violations),
                    JsonField("failed", &SeedReport::failed).OrDefault()};
}

struct SweepReport {
  std::string scenario;
  std::vector<SeedReport> seeds;
  uint64_t seeds_with_violations = 0;
  std::optional<RunReport> first_failing;  // run again in full
  std::string shard;  // "K/N" when the sweep ran shard K of N of its seeds (--shard)
  // The command that runs one of its seeds again, kSeedPlaceholder where the seed goes.
  std::string reproduce;
};
constexpr auto JsonFields(const SweepReport*) {
  using S = SweepReport;
  return std::tuple{JsonField("scenario", &S::scenario),
                    JsonField("seeds", &S::seeds),
                    JsonField("seeds_with_violations", &S::seeds_with_violations),
                    JsonField("first_failing", &S::first_failing),
                    JsonField("shard", &S::shard).OrDefault(),
                    JsonField("reproduce", &S::reproduce).OrDefault()};
}

inline constexpr char kSeedPlaceholder[] = "{seed}";
// `sweep`'s command for `seed` (empty when the sweep has none).
std::string ReproduceSeed(const SweepReport& sweep, uint64_t seed);

// What a command found: a violation, a failure (the limiter answered with its own error), or
// nothing. Every report's JSON says it as "verdict", and the exit status, the JUnit file and the
// text agree with it.
enum class CheckVerdict { kViolation, kFailure, kNone };
using CheckVerdictInfo = NameRow<CheckVerdict>;
inline constexpr CheckVerdictInfo kCheckVerdicts[] = {
    {CheckVerdict::kViolation, "violation"},
    {CheckVerdict::kFailure, "failure"},
    {CheckVerdict::kNone, "none"},
};
inline nlohmann::json ToJsonValue(CheckVerdict v) {
  return std::string(NameOf<CheckVerdictInfo>(kCheckVerdicts, v));
}
inline void ReadJsonValue(const JsonReader& r, CheckVerdict& v) {
  v = r.Named<CheckVerdictInfo>(kCheckVerdicts, "verdict");
}

// What `ratelab check` found (check --json). The fields of a violation are empty unless the
// verdict is one, and so are those of a failure.
struct CheckReport {
  std::string protocol;
  std::string policy;  // the minimal case's, for a violation
  CheckVerdict verdict = CheckVerdict::kNone;
  // Whose clock a user's script decides on, and so when its decisions were judged: "server" or
  // "client"; "process" for a user's limiter process (decided at the instant each message is sent
  // to it); empty for a protocol of ratelab's own.
  std::string clock;
  // The resolution a user's script is judged at, and why ("1ms (it is sent the time as
  // {now_ms})"); empty for a protocol of ratelab's own.
  std::string judged_at;
  uint64_t seeds_searched = 0;
  std::string shard;  // "K/N" when the search ran shard K of N of its seeds (--shard)
  // The case's start, from which the witness's `_s` fields count ("start": FormatUtc).
  Instant start{};
  std::vector<CheckId> checks;  // what was checked
  std::string fault_kinds;      // the faults drawn ("crash,restart" or "none")
  // The longest a request was held between its client reading the clock and its call reaching
  // the store ("500ms", FormatDuration; --max-transit).
  std::string max_transit;
  // Requests the limiter failed and its client decided itself (--on-script-error), over the
  // seeds searched.
  uint64_t fallback_decisions = 0;
  uint64_t seed = 0;  // the seed that found it
  std::string reproduce;
  // For a violation: the minimal case, and what it broke.
  uint64_t requests = 0;        // in the minimal case
  uint64_t drawn_requests = 0;  // in the case the seed drew, before shrinking
  uint64_t nodes = 0;
  std::vector<FaultReport> faults;
  std::optional<ViolationReport> violation;
  // For a user's script whose witness looks like a misread reply: what to look at; else empty.
  std::string hint;
  // For a violation that needs a condition beyond ordinary traffic (a request held in transit):
  // the condition, in words; else empty.
  std::string needs;
  // For a failure: the limiter's own error, and the request it failed on ("request").
  std::string failure;
  std::optional<WitnessEvent> failed_request;
};
constexpr auto JsonFields(const CheckReport*) {
  using C = CheckReport;
  return std::tuple{JsonField("protocol", &C::protocol),
                    JsonField("policy", &C::policy),
                    JsonField("verdict", &C::verdict),
                    JsonField("clock", &C::clock).OrDefault(),
                    JsonField("judged_at", &C::judged_at).OrDefault(),
                    JsonField("seeds_searched", &C::seeds_searched),
                    JsonField("shard", &C::shard).OrDefault(),
                    JsonField("start", &C::start),
                    JsonField("checks", &C::checks),
                    JsonField("fault_kinds", &C::fault_kinds),
                    JsonField("max_transit", &C::max_transit).OrDefault(),
                    JsonField("fallback_decisions", &C::fallback_decisions).OrDefault(),
                    JsonField("seed", &C::seed),
                    JsonField("reproduce", &C::reproduce),
                    JsonField("requests", &C::requests),
                    JsonField("drawn_requests", &C::drawn_requests),
                    JsonField("nodes", &C::nodes),
                    JsonField("faults", &C::faults),
                    JsonField("violation", &C::violation),
                    JsonField("hint", &C::hint).OrDefault(),
                    JsonField("needs", &C::needs).OrDefault(),
                    JsonField("failure", &C::failure),
                    JsonField("request", &C::failed_request)};
}
// Its fields, then that its verdict has what it needs: a violation its violation, a failure its
// request.
void ReadJsonValue(const JsonReader& r, CheckReport& check);

// What `stress` found of linearizability (StressReport::linearizability).
struct StressLinearizability {
  LinearVerdict verdict = LinearVerdict::kUnknown;
  int64_t calls = 0, keys = 0;  // judged
  int64_t states = 0;           // search states entered
  int64_t unknown_keys = 0;     // keys whose search ran out of its budget
  std::string lead;             // unknown: where the search got to
  int64_t broken_keys = 0;      // whose promise was broken, their search cut short
};
constexpr auto JsonFields(const StressLinearizability*) {
  using L = StressLinearizability;
  return std::tuple{JsonField("verdict", &L::verdict),
                    JsonField("calls", &L::calls),
                    JsonField("keys", &L::keys),
                    JsonField("states", &L::states),
                    JsonField("unknown_keys", &L::unknown_keys),
                    JsonField("lead", &L::lead),
                    JsonField("broken_keys", &L::broken_keys).OrDefault()};
}

// Latency from sent to answered, in milliseconds ("latency_ms").
struct StressLatency {
  double p50 = 0, p99 = 0;
};
constexpr auto JsonFields(const StressLatency*) {
  return std::tuple{JsonField("p50", &StressLatency::p50), JsonField("p99", &StressLatency::p99)};
}

// The key with the most admissions, and the most the promise allows it over the run.
struct BusiestKeyReport {
  std::string key;
  int64_t admitted = 0, allowed = 0;
};
constexpr auto JsonFields(const BusiestKeyReport*) {
  return std::tuple{JsonField("key", &BusiestKeyReport::key),
                    JsonField("admitted", &BusiestKeyReport::admitted),
                    JsonField("allowed", &BusiestKeyReport::allowed)};
}

// What `ratelab stress` measured and found (stress --json).
struct StressReport {
  std::string protocol;
  std::string failure;  // the limiter's own error, in words, when it answered with one
  std::string store;
  std::string policy;
  int64_t threads = 0;
  int64_t users = 0;
  double duration_s = 0;
  int64_t answered = 0, admitted = 0, denied = 0;
  double per_second = 0;
  StressLatency latency_ms;
  BusiestKeyReport busiest_key;
  CheckId promise = CheckId::kAnyWindowCap;  // the invariant the promise is judged as
  // Whether denials no order explains were judged (check "false-denials": not for a model an
  // earlier admission can give more room, such as an anchored window).
  bool false_denials_judged = false;
  // Every violation found: the promise's (check "promise"), the denials' (check "false-denials"),
  // then linearizability's (check "linearizable").
  std::vector<ViolationReport> violations;
  // Whether the answers are linearizable by the policy's model; none when the limiter failed.
  std::optional<StressLinearizability> linearizability;
};
constexpr auto JsonFields(const StressReport*) {
  using S = StressReport;
  return std::tuple{JsonField("protocol", &S::protocol),
                    JsonField("failure", &S::failure),
                    JsonField("store", &S::store),
                    JsonField("policy", &S::policy),
                    JsonField("threads", &S::threads),
                    JsonField("users", &S::users),
                    JsonField("duration_s", &S::duration_s),
                    JsonField("answered", &S::answered),
                    JsonField("admitted", &S::admitted),
                    JsonField("denied", &S::denied),
                    JsonField("per_second", &S::per_second),
                    JsonField("latency_ms", &S::latency_ms),
                    JsonField("busiest_key", &S::busiest_key),
                    JsonField("promise", &S::promise),
                    JsonField("false_denials_judged", &S::false_denials_judged).OrDefault(),
                    JsonField("violations", &S::violations),
                    JsonField("linearizability", &S::linearizability)};
}

// `j`, a report's JSON, with its verdict beside its fields as "verdict": what a reader acts on,
// in one word.
nlohmann::json WithVerdict(nlohmann::json j, CheckVerdict verdict);

// The one verdict of each report: a failure before a violation.
CheckVerdict VerdictOf(const RunReport& r);
CheckVerdict VerdictOf(const SweepReport& s);
CheckVerdict VerdictOf(const StressReport& s);

// Each report as JSON; a run's, a sweep's and a stress run's with their "verdict" (VerdictOf) added
// (a check's has its own).
nlohmann::json ToJson(const WitnessEvent& e);
nlohmann::json ToJson(const ViolationReport& v);
nlohmann::json ToJson(const FaultReport& f);
nlohmann::json ToJson(const RunReport& r);
nlohmann::json ToJson(const SweepReport& s);
nlohmann::json ToJson(const CheckReport& c);
nlohmann::json ToJson(const StressReport& s);

// `j` as every command writes JSON (--json, report.json, result.json): indented by two, ending
// in a newline, and with bytes that are not UTF-8 (a script's message, a server's answer, which
// ratelab passes on as they came) written as U+FFFD rather than thrown about.
std::string JsonText(const nlohmann::json& j);

// InvalidArgument naming the path of the first field that is missing or of the wrong type.
Result<RunReport> RunReportFromJson(const nlohmann::json& j);
Result<SweepReport> SweepReportFromJson(const nlohmann::json& j);
Result<CheckReport> CheckReportFromJson(const nlohmann::json& j);
Result<StressReport> StressReportFromJson(const nlohmann::json& j);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_REPORT_MODEL_H_
