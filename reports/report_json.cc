// The report model to JSON and back (report_model.h): each struct's field list (reports/fields.h)
// writes and reads it; what is here is what a field list cannot say, fields that must agree.
#include "reports/json_reader.h"
#include "reports/report_model.h"

namespace ratelab {

namespace {

using json = nlohmann::json;

// "expected N values (one a WHAT), found M" at `r` when `found` is not `expected`.
void ExpectCount(const JsonReader& r, size_t found, size_t expected, const char* what) {
  if (found != expected) {
    r.Report("expected " + std::to_string(expected) + " values (one a " + what + "), found " +
             std::to_string(found));
  }
}

}  // namespace

void ReadSecondsFromStart(const JsonReader& r, double& seconds) {
  seconds = r.NumberIn(-kMostSecondsFromStart, kMostSecondsFromStart);
}

void ReadOptionalSecondsFromStart(const JsonReader& r, std::optional<double>& seconds) {
  seconds.reset();
  if (r.IsNull()) return;
  ReadSecondsFromStart(r, seconds.emplace());
}

void ReadBinWidthMs(const JsonReader& r, double& width_ms) { width_ms = r.NumberIn(1e-6, 3.2e10); }

void ReadBinCount(const JsonReader& r, uint64_t& count) { count = r.UnsignedUpTo(100'000); }

void ReadUtcOffset(const JsonReader& r, std::optional<Duration>& offset) {
  offset = ParseUtcOffset(r.String());
  if (!offset) r.Report("expected an offset from UTC such as +01:00");
}

json WriteUtcOffset(const std::optional<Duration>& offset) {
  return offset ? json(FormatUtcOffset(*offset)) : json(nullptr);
}

void ReadJsonValue(const JsonReader& r, RunReport& run) {
  ReadJsonFields(r, run);
  const std::vector<JsonReader> limiters = r.Field("limiters").Elements();
  for (size_t i = 0; i < limiters.size() && i < run.limiters.size(); ++i) {
    const JsonReader series = limiters[i].Field("series");
    std::apply(
        [&](const auto&... f) {
          (ExpectCount(series.Field(f.name), (run.limiters[i].series.*(f.member)).size(),
                       run.bins.count, "time bin"),
           ...);
        },
        JsonFields(static_cast<const SeriesReport*>(nullptr)));
  }
  const std::vector<JsonReader> users = r.Field("users").Elements();
  for (size_t i = 0; i < users.size() && i < run.users.size(); ++i) {
    ExpectCount(users[i].Field("admitted"), run.users[i].admitted.size(), run.limiters.size(),
                "limiter");
  }
}

void ReadJsonValue(const JsonReader& r, CheckReport& check) {
  ReadJsonFields(r, check);
  if (check.verdict == CheckVerdict::kViolation && !check.violation) {
    r.Field("violation").Report("expected the violation of a check whose verdict is one");
  } else if (check.verdict == CheckVerdict::kFailure && !check.failed_request) {
    r.Field("request").Report("expected the request the limiter failed on");
  }
}

json ToJson(const WitnessEvent& e) { return ToJsonValue(e); }

json ToJson(const ViolationReport& v) { return ToJsonValue(v); }

json ToJson(const FaultReport& f) { return ToJsonValue(f); }

std::string JsonText(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

CheckVerdict VerdictOf(const RunReport& r) {
  bool broken = false, failed = false;
  for (const LimiterReport& l : r.limiters) {
    failed |= l.failed > 0;
    for (const CheckCount& c : l.checks) broken |= c.violations > 0;
  }
  if (r.across_seeds) {
    for (const LimiterSpreadReport& l : r.across_seeds->limiters) {
      failed |= l.seeds_failed > 0;
      for (const CheckSeeds& c : l.checks) broken |= c.seeds > 0;
    }
  }
  return failed ? CheckVerdict::kFailure : broken ? CheckVerdict::kViolation : CheckVerdict::kNone;
}

CheckVerdict VerdictOf(const SweepReport& s) {
  bool broken = false, failed = false;
  for (const SeedReport& seed : s.seeds) {
    failed |= seed.failed > 0;
    broken |= seed.violations > 0;
  }
  return failed ? CheckVerdict::kFailure : broken ? CheckVerdict::kViolation : CheckVerdict::kNone;
}

CheckVerdict VerdictOf(const StressReport& s) {
  if (!s.failure.empty()) return CheckVerdict::kFailure;
  return s.violations.empty() ? CheckVerdict::kNone : CheckVerdict::kViolation;
}

json WithVerdict(json j, CheckVerdict verdict) {
  j["verdict"] = ToJsonValue(verdict);
  return j;
}

json ToJson(const RunReport& r) { return WithVerdict(ToJsonValue(r), VerdictOf(r)); }

json ToJson(const SweepReport& s) { return WithVerdict(ToJsonValue(s), VerdictOf(s)); }

json ToJson(const CheckReport& c) { return ToJsonValue(c); }

json ToJson(const StressReport& s) { return WithVerdict(ToJsonValue(s), VerdictOf(s)); }

Result<RunReport> RunReportFromJson(const json& j) { return FromJsonFields<RunReport>(j); }

Result<SweepReport> SweepReportFromJson(const json& j) { return FromJsonFields<SweepReport>(j); }

Result<CheckReport> CheckReportFromJson(const json& j) { return FromJsonFields<CheckReport>(j); }

Result<StressReport> StressReportFromJson(const json& j) { return FromJsonFields<StressReport>(j); }

std::string ReproduceSeed(const SweepReport& sweep, uint64_t seed) {
  std::string out = sweep.reproduce;
  const size_t at = out.find(kSeedPlaceholder);
  if (at != std::string::npos) {
    out.replace(at, std::char_traits<char>::length(kSeedPlaceholder), std::to_string(seed));
  }
  return out;
}

}  // namespace ratelab
