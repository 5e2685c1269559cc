#include "reports/run_report.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>

#include "reports/metrics.h"

namespace ratelab {

namespace {

constexpr size_t kTopUsers = 20;

double Seconds(Instant t, Instant start) { return static_cast<double>((t - start).count()) / 1e9; }
double Millis(Duration d) { return static_cast<double>(d.count()) / 1e6; }

MetricsReport MakeMetricsReport(const LimiterMetrics& m, const LimiterOutcome& o, Instant start) {
  MetricsReport r;
  r.over_admitted = m.over_admitted;
  r.false_denials = m.false_denials;
  r.exact_admitted = m.exact_admitted;
  r.burst_ratio = m.burst_ratio;
  r.fairness = m.fairness;
  r.contended_users = m.contended_users;
  r.state_keys = o.state.keys;
  r.state_bytes = o.state.bytes;
  r.state_bytes_per_key = m.state_bytes_per_key;
  r.steps_per_decision = m.steps_per_decision;
  if (!m.latency_cdf.empty()) {
    r.latency_ms = LatencySummary{Millis(m.latency_cdf[50]), Millis(m.latency_cdf[95]),
                                  Millis(m.latency_cdf[99]), Millis(m.latency_cdf[100])};
    for (Duration d : m.latency_cdf) r.latency_cdf_ms.push_back(Millis(d));
  }
  for (const FaultOutcome& f : m.during_faults) {
    r.during_faults.push_back({f.fault, Seconds(f.from, start), Seconds(f.to, start), f.offered,
                               f.admitted, f.denied, f.unanswered});
  }
  return r;
}

}  // namespace

std::string HexHash(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

std::vector<WitnessEvent> WitnessEvents(const std::vector<HistoryEvent>& events, Instant start) {
  std::vector<WitnessEvent> out;
  out.reserve(events.size());
  for (const HistoryEvent& e : events) {
    WitnessEvent w;
    w.id = e.id;
    w.key = e.key;
    w.node = e.node;
    w.cost = e.cost;
    w.at = FormatInstant(e.apply);
    w.outcome = DescribeOutcome(e);
    w.invoke_s = Seconds(e.invoke, start);
    if (!e.unanswered()) w.complete_s = Seconds(e.complete, start);
    for (const StepRecord& s : e.steps) w.steps.push_back({s.label, Seconds(s.at, start)});
    out.push_back(std::move(w));
  }
  return out;
}

namespace {

Instant FromStart(double seconds, Instant start) {
  return start + Duration(std::llround(seconds * 1e9));
}

// The decision an outcome names (DescribeOutcome's inverse), or none: no answer, or failed.
std::optional<Decision> DecisionOf(std::string_view outcome) {
  const auto after = [&](std::string_view prefix) -> std::optional<Duration> {
    if (!outcome.starts_with(prefix)) return std::nullopt;
    const std::string_view d = outcome.substr(prefix.size());
    return d == "never" ? std::optional<Duration>(kNever) : ParseDuration(d);
  };
  Decision d;
  d.allowed = outcome.starts_with("admitted");
  if (!d.allowed && !outcome.starts_with("denied")) return std::nullopt;
  d.fallback = outcome.ends_with(" by the client: the limiter failed");
  if (const std::optional<Duration> wait = after("admitted, to go after ")) d.wait = *wait;
  if (const std::optional<Duration> retry = after("denied, retry after ")) d.retry_after = *retry;
  return d;
}

}  // namespace

History HistoryOf(const std::vector<WitnessEvent>& witness, Instant start) {
  History h;
  h.reserve(witness.size());
  for (const WitnessEvent& w : witness) {
    HistoryEvent e;
    e.id = w.id;
    e.key = w.key;
    e.node = static_cast<int>(w.node);
    e.cost = w.cost;
    e.invoke = FromStart(w.invoke_s, start);
    if (w.complete_s) e.complete = FromStart(*w.complete_s, start);
    for (const WitnessStep& s : w.steps) e.steps.push_back({s.label, FromStart(s.at_s, start)});
    e.apply = ParseInstant(w.at).value_or(e.steps.empty() ? e.invoke : e.steps.back().at);
    if (w.outcome.starts_with("failed: ")) {
      e.failure = w.outcome.substr(8);
    } else {
      e.decision = DecisionOf(w.outcome);
    }
    h.push_back(std::move(e));
  }
  return h;
}

std::vector<FaultReport> FaultReports(const std::vector<FaultWindow>& faults, Instant start) {
  std::vector<FaultReport> out;
  for (const FaultWindow& f : faults) {
    out.push_back({f.what, Seconds(f.from, start), Seconds(f.to, start)});
  }
  return out;
}

bool WriteRequestLog(const RunResult& run, std::ostream& out) {
  for (const LimiterOutcome& o : run.limiters) {
    for (const HistoryEvent& e : o.history) {
      nlohmann::json j = {{"limiter", o.name}, {"id", e.id},
                          {"key", e.key},      {"node", e.node},
                          {"cost", e.cost},    {"sent_s", Seconds(e.invoke, run.start)}};
      j["answered_s"] =
          e.unanswered() ? nlohmann::json() : nlohmann::json(Seconds(e.complete, run.start));
      j["outcome"] = e.failed()       ? "failed"
                     : e.unanswered() ? "unanswered"
                     : e.admitted()   ? "admitted"
                                      : "denied";
      if (e.decision) {
        const Decision& d = *e.decision;
        j["remaining"] = d.remaining;
        j["reset_s"] = Seconds(d.reset, run.start);
        // A denial's wait; none (null) where no wait admits it.
        j["retry_after_s"] =
            d.allowed ? nlohmann::json(0.0)
            : d.retry_after == kNever
                ? nlohmann::json()
                : nlohmann::json(std::chrono::duration<double>(d.retry_after).count());
        j["wait_s"] = std::chrono::duration<double>(d.wait).count();
      }
      if (e.failed()) j["failure"] = e.failure;
      out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
  }
  return static_cast<bool>(out.flush());
}

std::string DescribeFailure(const HistoryEvent& e) {
  return "#" + std::to_string(e.id) + " (" + e.key + ", node " + std::to_string(e.node) +
         ", sent at " + FormatInstant(e.invoke) + "): " + e.failure;
}

ViolationReport MakeViolationReport(CheckId check, const Violation& v, Instant start,
                                    std::vector<WitnessEvent> witness) {
  std::optional<WindowReport> window;
  if (v.window) {
    window = WindowReport{Seconds(v.window->from, start), Seconds(v.window->to, start),
                          v.window->closed, v.window->span};
  }
  std::optional<BucketReport> bucket;
  if (v.bucket) {
    bucket = BucketReport{v.bucket->burst,
                          std::chrono::duration<double, std::milli>(v.bucket->interval).count()};
  }
  std::optional<GridReport> grid;
  if (v.grid && v.grid->period > Duration(0)) {
    // The first edge at or after the start: an offset the report's seconds can hold exactly.
    const int64_t k = -FloorDiv((v.grid->origin - start).count(), v.grid->period.count());
    grid = GridReport{Seconds(v.grid->origin + k * v.grid->period, start),
                      std::chrono::duration<double, std::milli>(v.grid->period).count()};
  }
  return {check, v.invariant, v.key, v.summary, std::move(witness), window, bucket, grid};
}

ViolationReport MakeViolationReport(CheckId check, const Violation& v, Instant start) {
  return MakeViolationReport(check, v, start, WitnessEvents(v.witness, start));
}

uint64_t LimiterReport::ClaimBroken(const ClaimReport& claim) const {
  const CheckId held_to = claim.not_given ? CheckId::kPromise : CheckId::kAnyWindowCap;
  for (const CheckCount& c : checks) {
    if (c.check == held_to) return c.violations;
  }
  return claim.not_given || metrics.over_admitted == 0 ? 0 : 1;
}

RunReport MakeRunReport(const RunResult& c) {
  const Bins bins = ChooseBins(c);
  RunReport r;
  r.scenario = c.scenario;
  r.description = c.description;
  r.seed = c.seed;
  r.history_hash = HexHash(c.history_hash());
  r.buggify = c.buggify;
  r.start = c.start;
  r.utc_offset = c.utc_offset;
  r.claim = {c.limit, FormatDuration(c.window), Millis(c.window), !c.claim_given};
  r.traffic = c.traffic;
  r.faults = FaultReports(c.faults, c.start);
  r.notes = c.notes;
  r.bins = {FormatDuration(bins.width), Millis(bins.width), bins.count,
            Seconds(bins.start, c.start)};
  for (const UserShare& u : TopUsers(c, kTopUsers))
    r.users.push_back({u.key, u.offered, u.admitted});
  for (const LimiterOutcome& o : c.limiters) {
    LimiterReport l;
    l.name = o.name;
    l.protocol = o.protocol;
    l.policy = o.PolicyText();
    if (!o.by_rules) l.algorithm = o.policy.algorithm;
    l.offered = o.offered;
    l.admitted = o.admitted;
    l.denied = o.denied;
    l.unanswered = o.unanswered;
    l.max_in_any_window = o.max_in_any_window;
    l.history_hash = HexHash(o.history_hash());
    l.metrics = MakeMetricsReport(ComputeMetrics(c, o), o, c.start);
    const TimeSeries s = ComputeSeries(c, o, bins);
    l.series = {s.offered, s.admitted, s.denied, s.unanswered, s.peak_in_window};
    if (const HistoryEvent* e = o.FirstFailure()) {
      l.failed = o.failed;
      l.failure = DescribeFailure(*e);
    }
    for (const CheckResult& check : o.checks) {
      l.checks.push_back({check.check, check.violations.size()});
      for (const Violation& v : check.violations) {
        l.violations.push_back(MakeViolationReport(check.check, v, c.start));
      }
    }
    r.limiters.push_back(std::move(l));
  }
  return r;
}

}  // namespace ratelab
