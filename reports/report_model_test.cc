// The report model: made from a run's result with every number recounted from the history; to
// JSON and back unchanged; a file that is not a report refused with the path of what is wrong.
#include "reports/report_model.h"

#include <gtest/gtest.h>

#include <functional>

#include "reports/any_report.h"
#include "reports/probe_report.h"
#include "reports/run_report.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"

namespace ratelab {
namespace {

RunReport DemoReport(uint64_t seed) {
  Result<RunResult> c = RunScenario(DemoScenario(), seed);
  EXPECT_TRUE(c.ok()) << c.status();
  return MakeRunReport(*c);
}

TEST(RunReport, CarriesTheSeedHashAndEveryLimitersNumbers) {
  Result<RunResult> c = RunScenario(DemoScenario(), 4);
  ASSERT_TRUE(c.ok());
  const RunReport r = MakeRunReport(*c);
  EXPECT_EQ(r.seed, 4u);
  EXPECT_EQ(r.history_hash, HexHash(c->history_hash()));
  ASSERT_EQ(r.limiters.size(), c->limiters.size());
  for (size_t i = 0; i < c->limiters.size(); ++i) {
    const LimiterOutcome& o = c->limiters[i];
    const LimiterReport& l = r.limiters[i];
    // Recounted from the history, not copied from the outcome's counters.
    int64_t admitted = 0, denied = 0;
    for (const HistoryEvent& e : o.history) {
      admitted += e.admitted();
      denied += e.denied();
    }
    EXPECT_EQ(l.admitted, admitted);
    EXPECT_EQ(l.denied, denied);
    EXPECT_EQ(l.max_in_any_window, o.max_in_any_window);
    EXPECT_EQ(l.violations.size(), static_cast<size_t>(o.violation_count()));
    EXPECT_EQ(l.series.offered.size(), r.bins.count);
  }
  const LimiterReport& fw = r.limiters[0];
  ASSERT_EQ(fw.protocol, "memory-fixed-window");
  ASSERT_FALSE(fw.violations.empty());
  EXPECT_EQ(fw.violations[0].invariant, CheckId::kAnyWindowCap);
  EXPECT_EQ(fw.violations[0].check, CheckId::kAnyWindowCap);
  EXPECT_EQ(fw.violations[0].witness.size(), 6u);
  EXPECT_EQ(fw.violations[0].witness[0].outcome, "admitted");
}

TEST(RunReport, HashIsSixteenHexDigits) { EXPECT_EQ(HexHash(0xabc), "0000000000000abc"); }

TEST(RunReport, ReadsBackWhatItWrites) {
  RunReport r = DemoReport(2);
  r.reproduce = "ratelab demo --seed 2";
  const nlohmann::json once = ToJson(r);
  Result<RunReport> back = RunReportFromJson(nlohmann::json::parse(once.dump()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back).dump(), once.dump());
  EXPECT_EQ(back->reproduce, r.reproduce);

  SweepReport sweep{"demo", {{1, "00000000000000aa", 0}, {2, r.history_hash, 3}}, 1, r, "", ""};
  Result<SweepReport> sweep_back = SweepReportFromJson(nlohmann::json::parse(ToJson(sweep).dump()));
  ASSERT_TRUE(sweep_back.ok()) << sweep_back.status();
  EXPECT_EQ(ToJson(*sweep_back).dump(), ToJson(sweep).dump());
  // A shard's sweep says which shard it was.
  sweep.shard = "2/4";
  sweep_back = SweepReportFromJson(ToJson(sweep));
  ASSERT_TRUE(sweep_back.ok()) << sweep_back.status();
  EXPECT_EQ(sweep_back->shard, "2/4");
  sweep.first_failing.reset();
  sweep_back = SweepReportFromJson(ToJson(sweep));
  ASSERT_TRUE(sweep_back.ok()) << sweep_back.status();
  EXPECT_FALSE(sweep_back->first_failing);
}

TEST(RunReport, AFileThatIsNotAReportIsRefusedWithThePathOfTheProblem) {
  const nlohmann::json good = ToJson(DemoReport(1));
  const auto error_of = [&](const std::function<void(nlohmann::json&)>& damage) {
    nlohmann::json j = good;
    damage(j);
    Result<RunReport> r = RunReportFromJson(j);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string("(read)") : std::string(r.status().message());
  };
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["limiters"][2]["metrics"]["fairness"] = "high"; }),
            "limiters[2].metrics.fairness: expected a number or null, found a string");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["seed"] = nullptr; }),
            "seed: expected a whole number of 0 or more, found null");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["seed"] = -1; }),
            "seed: expected a whole number of 0 or more, found a number");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j.erase("scenario"); }),
            "the document: missing field 'scenario'");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["limiters"][0].erase("name"); }),
            "limiters[0]: missing field 'name'");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["limiters"][1]["series"]["denied"].erase(0); }),
            "limiters[1].series.denied: expected " + good["bins"]["count"].dump() +
                " values (one a time bin), found " +
                std::to_string(good["bins"]["count"].get<size_t>() - 1));
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["limiters"] = 3; }),
            "limiters: expected an array, found a number");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j = nlohmann::json::array(); }),
            "the document: expected an object, found an array");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["users"][0]["admitted"].erase(0); }),
            "users[0].admitted: expected 5 values (one a limiter), found 4");
  EXPECT_EQ(error_of([](nlohmann::json& j) { j["limiters"][3]["algorithm"] = "leaky"; }),
            "limiters[3].algorithm: unknown algorithm 'leaky' (expected fixed-window, sliding-log, "
            "sliding-counter, token-bucket, gcra, anchored-window, sliding-log-closed, "
            "sliding-counter-anchored, token-bucket-intervals, token-bucket-credit, "
            "anchored-window-half-open or sliding-counter-anchored-floored)");
  // What a violation broke is one of the checks, by name.
  size_t broken = 0;
  while (good["limiters"][broken]["violations"].empty()) ++broken;
  EXPECT_EQ(error_of([&](nlohmann::json& j) {
              j["limiters"][broken]["violations"][0]["invariant"] = "made-up";
            }),
            "limiters[" + std::to_string(broken) +
                "].violations[0].invariant: unknown check 'made-up' (expected promise, "
                "aligned-window-cap, anchored-window-cap, any-window-cap, bucket-conformance, "
                "false-denials, retry-after, key-expiry, survives-restart, anchored-grid-cap, "
                "boundary-burst, linearizable, most-in-window, over-bucket, false-denial-streak, "
                "server-errors, retry-after-missing, retry-after-too-long, header-syntax, "
                "remaining-above-model, reset-in-the-past, reset-beyond-model, remaining-rose, "
                "retry-after-dishonest or unreadable-answers)");
}

TEST(RunReport, AReportWrittenBeforeAlgorithmsWereIsStillRead) {
  nlohmann::json j = ToJson(DemoReport(1));
  EXPECT_EQ(j["limiters"][3]["algorithm"], "token-bucket");
  for (nlohmann::json& l : j["limiters"]) l.erase("algorithm");
  Result<RunReport> r = RunReportFromJson(j);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->limiters[3].algorithm);
}

// A violation with a one-request witness.
ViolationReport MadeUpViolation(CheckId check, CheckId invariant) {
  WitnessEvent e{3, "user:u1:/api", 1, 1, "2026-01-01 00:00:01.000", "admitted", 1.0, 1.5, {}};
  e.steps.push_back({"INCR rl:{user:u1:/api}", 1.25});
  return {check, invariant, "user:u1:/api", "2 admitted in 1s", {e}};
}

CheckReport MadeUpCheck(CheckVerdict verdict) {
  CheckReport c;
  c.protocol = "kv-fixed-window-lua";
  c.policy = "fixed-window 2 per 1s";
  c.verdict = verdict;
  c.seeds_searched = 7;
  c.start = Instant{} + std::chrono::hours(24 * 365 * 56);
  c.checks = {CheckId::kPromise, CheckId::kFalseDenials};
  c.fault_kinds = "crash,restart";
  if (verdict == CheckVerdict::kViolation) {
    c.seed = 7;
    c.requests = 3;
    c.drawn_requests = 40;
    c.nodes = 2;
    c.reproduce = "ratelab check kv-fixed-window-lua --seed 7";
    c.violation = MadeUpViolation(CheckId::kPromise, CheckId::kAlignedWindowCap);
    c.faults = {{"node 0 crashed", 0.5, 0.75}};
  } else if (verdict == CheckVerdict::kFailure) {
    c.seed = 2;
    c.failure = "lua:x.lua: the script failed";
    c.failed_request = MadeUpViolation(CheckId::kPromise, CheckId::kAlignedWindowCap).witness[0];
  }
  return c;
}

StressReport MadeUpStress() {
  StressReport s;
  s.protocol = "kv-token-bucket-hgetall-hset";
  s.store = "redis://127.0.0.1:6379";
  s.policy = "token-bucket burst 10, one per 10ms";
  s.threads = 8;
  s.users = 1;
  s.duration_s = 1.5;
  s.answered = 1000;
  s.admitted = 160;
  s.denied = 840;
  s.per_second = 666.7;
  s.latency_ms = {0.25, 1.5};
  s.busiest_key = {"user:u1:/api", 160, 150};
  s.promise = CheckId::kBucketConformance;
  s.violations = {MadeUpViolation(CheckId::kPromise, CheckId::kBucketConformance),
                  MadeUpViolation(CheckId::kLinearizable, CheckId::kLinearizable)};
  s.linearizability = StressLinearizability{LinearVerdict::kNotLinearizable, 1000, 1, 5000, 0, ""};
  return s;
}

TEST(CheckReport, ReadsBackWhatItWritesForEachVerdict) {
  for (const CheckVerdict verdict :
       {CheckVerdict::kViolation, CheckVerdict::kFailure, CheckVerdict::kNone}) {
    const nlohmann::json once = ToJson(MadeUpCheck(verdict));
    Result<CheckReport> back = CheckReportFromJson(nlohmann::json::parse(once.dump()));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(ToJson(*back), once);
    EXPECT_EQ(back->verdict, verdict);
  }
}

TEST(CheckReport, AVerdictWithoutWhatItNeedsIsRefused) {
  nlohmann::json j = ToJson(MadeUpCheck(CheckVerdict::kViolation));
  j["violation"] = nullptr;
  Result<CheckReport> r = CheckReportFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "violation: expected the violation of a check whose verdict is one");
  j = ToJson(MadeUpCheck(CheckVerdict::kFailure));
  j["request"] = nullptr;
  r = CheckReportFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "request: expected the request the limiter failed on");
  j["verdict"] = "maybe";
  r = CheckReportFromJson(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "verdict: unknown verdict 'maybe' (expected violation, failure or none)");
}

TEST(StressReport, ReadsBackWhatItWrites) {
  const nlohmann::json once = ToJson(MadeUpStress());
  Result<StressReport> back = StressReportFromJson(nlohmann::json::parse(once.dump()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(ToJson(*back), once);
  EXPECT_EQ(back->linearizability->verdict, LinearVerdict::kNotLinearizable);
  EXPECT_EQ(back->busiest_key.allowed, 150);
  // A failed run has no linearizability.
  StressReport failed = MadeUpStress();
  failed.failure = "lua:x.lua: the script failed";
  failed.violations.clear();
  failed.linearizability.reset();
  back = StressReportFromJson(ToJson(failed));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->linearizability);
  EXPECT_EQ(back->failure, failed.failure);
}

// A probe's traffic is named as a scenario's; a report written before says steady, bursts or
// boundary, and is read as the same traffic.
TEST(ProbeReport, ItsTrafficIsAScenariosAndOlderNamesAreStillRead) {
  ProbeReport made;
  made.traffic = TrafficKind::kBurst;
  nlohmann::json j = ToJson(made);
  EXPECT_EQ(j["traffic"], "burst");
  for (const auto& [written, read] :
       {std::pair{"bursts", TrafficKind::kBurst}, std::pair{"steady", TrafficKind::kConstant},
        std::pair{"boundary", TrafficKind::kBoundaryAttack},
        std::pair{"boundary-attack", TrafficKind::kBoundaryAttack}}) {
    j["traffic"] = written;
    const Result<ProbeReport> back = ProbeReportFromJson(j);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->traffic, read) << written;
  }
  j["traffic"] = "diurnal";  // a scenario's, which no probe sends
  EXPECT_EQ(ProbeReportFromJson(j).status().message(),
            "traffic: unknown traffic 'diurnal' (expected constant, poisson, boundary-attack or "
            "burst)");
}

TEST(AnyReport, ReadsEachKindAsItself) {
  const auto kind = [](const nlohmann::json& j) -> int {
    Result<AnyReport> r = ReadAnyReport(j);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? static_cast<int>(r->index()) : -1;
  };
  const RunReport run = DemoReport(1);
  EXPECT_TRUE(std::holds_alternative<RunReport>(*ReadAnyReport(ToJson(run))));
  EXPECT_EQ(kind(ToJson(SweepReport{"demo", {{1, run.history_hash, 3}}, 1, run, "", ""})), 1);
  EXPECT_EQ(kind(ToJson(MadeUpCheck(CheckVerdict::kNone))), 2);
  EXPECT_EQ(kind(ToJson(MadeUpStress())), 3);
  // What is none of them is refused, with what it was read as and where that failed.
  Result<AnyReport> other = ReadAnyReport(nlohmann::json{{"name", "x"}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().message(),
            "not a ratelab report (expected the JSON of ratelab compare, demo, run, check, stress, "
            "probe or worst): the document: missing field 'scenario'");
}

}  // namespace
}  // namespace ratelab
