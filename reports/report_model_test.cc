// The report model: made from a run's result with every number recounted from the history; to
// JSON and back unchanged; a file that is not a report refused with the path of what is wrong.
#include "reports/report_model.h"

#include <gtest/gtest.h>

#include <functional>

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
  EXPECT_EQ(fw.violations[0].invariant, Invariant::kAnyWindowCap);
  EXPECT_EQ(fw.violations[0].check, "any-window-cap");
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
            "limiters[3].algorithm: unknown algorithm 'leaky'");
  // What a violation broke is one of the invariants, by name.
  size_t broken = 0;
  while (good["limiters"][broken]["violations"].empty()) ++broken;
  EXPECT_EQ(
      error_of([&](nlohmann::json& j) {
        j["limiters"][broken]["violations"][0]["invariant"] = "made-up";
      }),
      "limiters[" + std::to_string(broken) +
          "].violations[0].invariant: unknown invariant 'made-up' (expected aligned-window-cap, "
          "anchored-window-cap, anchored-grid-cap, any-window-cap, boundary-burst, "
          "bucket-conformance, false-denials, retry-after, key-expiry, survives-restart, "
          "linearizable, most-in-window or over-bucket)");
}

TEST(RunReport, AReportWrittenBeforeAlgorithmsWereIsStillRead) {
  nlohmann::json j = ToJson(DemoReport(1));
  EXPECT_EQ(j["limiters"][3]["algorithm"], "token-bucket");
  for (nlohmann::json& l : j["limiters"]) l.erase("algorithm");
  Result<RunReport> r = RunReportFromJson(j);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->limiters[3].algorithm);
}

}  // namespace
}  // namespace ratelab
