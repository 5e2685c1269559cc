// The numbers in the report data, recomputed here from the histories by brute force (no code
// shared with metrics.cc), on a run with latency, two nodes, a crash and a store outage.
#include "reports/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "reports/run_report.h"
#include "sim/scenario.h"

namespace ratelab {
namespace {

constexpr char kYaml[] = R"(
name: metrics
nodes: 2
latency:
  to_store: {base: 1ms, jitter: 4ms}
  from_store: {base: 1ms, jitter: 4ms}
limiters:
  - {algorithm: fixed-window, limit: 3, window: 10s}
  - {algorithm: sliding-log, limit: 3, window: 10s}
  - {protocol: kv-fixed-window-lua, algorithm: fixed-window, limit: 3, window: 10s,
     on_store_error: fail-open}
traffic:
  - {type: zipf-users, users: 6, exponent: 1.2, duration: 2m, mean_gap: 700ms}
  - {type: boundary-attack, user: attacker, edge: 30s, spread: 300ms, per_side: 3}
  - {type: burst, user: crowd, at: 19998ms, count: 10}
faults:
  - {type: crash, node: 1, at: 20s, down_for: 5s}
  - {type: store-outage, at: 50s, for: 15s}
  - {type: clock-jump, node: 0, at: 80s, by: 2s}
claim: {limit: 3, window: 10s}
checks: [promise, any-window-cap]
)";

RunResult RunMetricsScenario() {
  Result<Scenario> s = ParseScenario(kYaml, "metrics.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  Result<RunResult> c = RunScenario(*s, 3);
  EXPECT_TRUE(c.ok()) << c.status();
  return *std::move(c);
}

// Admitted cost of `key` sent in (t - w, t], counting the events before `self` in (invoke, id)
// order and `self` itself when `with_self`.
int64_t AdmittedInWindow(const History& h, const HistoryEvent& self, Duration w, bool with_self) {
  int64_t n = 0;
  for (const HistoryEvent& e : h) {
    if (e.key != self.key || !e.admitted() || self.invoke - e.invoke >= w) continue;
    const bool before = e.invoke < self.invoke || (e.invoke == self.invoke && e.id < self.id);
    if (before || (with_self && e.id == self.id)) n += e.cost;
  }
  return n;
}

double Seconds(Instant t, Instant start) { return static_cast<double>((t - start).count()) / 1e9; }

TEST(ReportData, NumbersMatchTheHistoryRecomputedByBruteForce) {
  const RunResult c = RunMetricsScenario();
  const nlohmann::json j = ToJson(MakeRunReport(c));
  ASSERT_EQ(j["limiters"].size(), 3u);
  ASSERT_EQ(j["faults"].size(), 3u);
  const double width_s = j["bins"]["width_ms"].get<double>() / 1000;
  for (size_t i = 0; i < c.limiters.size(); ++i) {
    const History& h = c.limiters[i].history;
    const nlohmann::json& l = j["limiters"][i];
    const nlohmann::json& m = l["metrics"];
    SCOPED_TRACE(l["name"].get<std::string>());

    int64_t over = 0, false_denials = 0, steps = 0, answered = 0;
    std::vector<double> latencies_ms;
    for (const HistoryEvent& e : h) {
      if (e.admitted() && AdmittedInWindow(h, e, c.window, true) > c.limit) ++over;
      if (e.denied() && AdmittedInWindow(h, e, c.window, false) + e.cost <= c.limit) {
        ++false_denials;
      }
      steps += static_cast<int64_t>(e.steps.size());
      if (e.decision) {
        ++answered;
        latencies_ms.push_back(static_cast<double>((e.complete - e.invoke).count()) / 1e6);
      }
    }
    EXPECT_EQ(m["over_admitted"], over);
    EXPECT_EQ(m["false_denials"], false_denials);
    EXPECT_DOUBLE_EQ(m["steps_per_decision"].get<double>(),
                     static_cast<double>(steps) / static_cast<double>(answered));
    std::sort(latencies_ms.begin(), latencies_ms.end());
    const size_t median_rank = (latencies_ms.size() + 1) / 2;  // nearest rank of p50
    EXPECT_DOUBLE_EQ(m["latency_ms"]["p50"].get<double>(), latencies_ms[median_rank - 1]);
    EXPECT_DOUBLE_EQ(m["latency_ms"]["max"].get<double>(), latencies_ms.back());
    EXPECT_GT(latencies_ms.back(), 2.0);  // the latency model is on

    // Fairness: Jain over users that offered more than the limit in some window.
    std::map<std::string, std::pair<int64_t, int64_t>> users;  // offered, admitted
    std::map<std::string, bool> contended;
    for (const HistoryEvent& e : h) {
      users[e.key].first += 1;
      users[e.key].second += e.admitted();
      int64_t offered_in_window = 0;
      for (const HistoryEvent& f : h) {
        if (f.key == e.key && f.invoke <= e.invoke && e.invoke - f.invoke < c.window) {
          offered_in_window += f.cost;
        }
      }
      if (offered_in_window > c.limit) contended[e.key] = true;
    }
    double sum = 0, squares = 0;
    for (const auto& [key, yes] : contended) {
      const double x = static_cast<double>(users[key].second) / users[key].first;
      sum += x;
      squares += x * x;
    }
    ASSERT_FALSE(contended.empty());
    EXPECT_EQ(m["contended_users"], contended.size());
    EXPECT_NEAR(m["fairness"].get<double>(), sum * sum / (contended.size() * squares), 1e-12);

    // Series: every request in exactly one bin, by send time.
    const nlohmann::json& series = l["series"];
    int64_t offered = 0, admitted = 0, denied = 0, unanswered = 0;
    for (size_t b = 0; b < series["offered"].size(); ++b) {
      offered += series["offered"][b].get<int64_t>();
      admitted += series["admitted"][b].get<int64_t>();
      denied += series["denied"][b].get<int64_t>();
      unanswered += series["unanswered"][b].get<int64_t>();
    }
    EXPECT_EQ(offered, static_cast<int64_t>(h.size()));
    EXPECT_EQ(admitted, l["admitted"]);
    EXPECT_EQ(denied, l["denied"]);
    EXPECT_EQ(unanswered, l["unanswered"]);
    const HistoryEvent& probe = h[h.size() / 2];
    const double bins_from = j["bins"]["start_s"].get<double>();
    const size_t bin = static_cast<size_t>((Seconds(probe.invoke, c.start) - bins_from) / width_s);
    EXPECT_GE(series["offered"][bin].get<int64_t>(), 1);
    // The peak series tops out at the run's most admitted in any window.
    int64_t peak = 0;
    for (const nlohmann::json& v : series["peak_in_window"])
      peak = std::max(peak, v.get<int64_t>());
    EXPECT_EQ(peak, l["max_in_any_window"]);
    // Each bin's peak is the most one key held in a window ending anywhere in the bin: at one of
    // its admissions, or at its start (what earlier admissions left in the window), so it never
    // drops to 0 while a key still holds admissions.
    for (size_t b = 0; b < series["peak_in_window"].size(); ++b) {
      const Instant from = c.start + std::chrono::round<Duration>(std::chrono::duration<double>(
                                         bins_from + width_s * static_cast<double>(b)));
      const Instant to =
          from + std::chrono::round<Duration>(std::chrono::duration<double>(width_s));
      int64_t most = 0;
      std::map<std::string, int64_t> at_start;
      for (const HistoryEvent& e : h) {
        if (!e.admitted()) continue;
        if (e.invoke >= from && e.invoke < to) {
          most = std::max(most, AdmittedInWindow(h, e, c.window, true));
        }
        if (e.invoke < from && from - e.invoke < c.window) at_start[e.key] += e.cost;
      }
      for (const auto& [key, n] : at_start) most = std::max(most, n);
      EXPECT_EQ(series["peak_in_window"][b].get<int64_t>(), most) << "bin " << b;
    }

    // During each fault: requests sent within it (a clock jump: in the window after it).
    for (size_t f = 0; f < c.faults.size(); ++f) {
      const FaultWindow& fault = c.faults[f];
      const Instant to = fault.to == fault.from ? fault.from + c.window : fault.to;
      int64_t in = 0, in_admitted = 0;
      for (const HistoryEvent& e : h) {
        if (e.invoke >= fault.from && e.invoke < to) {
          ++in;
          in_admitted += e.admitted();
        }
      }
      EXPECT_EQ(m["during_faults"][f]["offered"], in) << fault.what;
      EXPECT_EQ(m["during_faults"][f]["admitted"], in_admitted) << fault.what;
    }
  }
  // What the faults did shows in the numbers: the crash lost requests in flight on node 1, and
  // the fail-open limiter admitted everything during the outage.
  EXPECT_GT(j["limiters"][0]["unanswered"].get<int64_t>(), 0);
  const nlohmann::json& outage = j["limiters"][2]["metrics"]["during_faults"][1];
  EXPECT_GT(outage["offered"].get<int64_t>(), 0);
  EXPECT_EQ(outage["admitted"], outage["offered"]);
  // In-process state is per key; the Lua window's is in the store.
  EXPECT_EQ(j["limiters"][0]["metrics"]["state_bytes_per_key"], 16.0);
  EXPECT_GT(j["limiters"][2]["metrics"]["state_keys"].get<int64_t>(), 0);
}

TEST(ReportData, BusiestUsersFirstWithEachLimitersAdmittedCount) {
  const RunResult c = RunMetricsScenario();
  const std::vector<UserShare> users = TopUsers(c, 3);
  ASSERT_EQ(users.size(), 3u);
  for (size_t i = 1; i < users.size(); ++i) EXPECT_GE(users[i - 1].offered, users[i].offered);
  for (const UserShare& u : users) {
    for (size_t l = 0; l < c.limiters.size(); ++l) {
      int64_t admitted = 0;
      for (const HistoryEvent& e : c.limiters[l].history)
        admitted += e.key == u.key && e.admitted();
      EXPECT_EQ(u.admitted[l], admitted) << u.key;
    }
  }
}

TEST(ReportData, BinsAreRoundCoverEveryRequestAndHoldSeveralEach) {
  const RunResult c = RunMetricsScenario();
  const Bins bins = ChooseBins(c);
  const size_t requests = c.limiters[0].history.size();
  EXPECT_LE(bins.count, std::max<size_t>(10, requests / 2));  // no barcode of single requests
  EXPECT_EQ(bins.width, std::chrono::seconds(2)) << requests << " requests in 2 minutes";
  Instant first = c.limiters[0].history[0].invoke;
  for (const HistoryEvent& e : c.limiters[0].history) {
    first = std::min(first, e.invoke);
    EXPECT_GE(e.invoke, bins.start);
    EXPECT_LT(e.invoke, bins.start + bins.width * static_cast<int64_t>(bins.count));
  }
  EXPECT_LT(first - bins.start, bins.width);                    // from the first request
  EXPECT_EQ((bins.start - c.start) % bins.width, Duration(0));  // edges on the scenario's clock
}

TEST(ReportData, BinsFitTrafficThatStartsLate) {
  Result<Scenario> s = ParseScenario(R"(
name: late
limiters: [{algorithm: fixed-window, limit: 3, window: 10s}]
traffic:
  - {type: constant, user: u, start: 8h, interval: 2s, count: 100}
)",
                                     "late.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  Result<RunResult> c = RunScenario(*s, 1);
  ASSERT_TRUE(c.ok()) << c.status();
  const Bins bins = ChooseBins(*c);
  EXPECT_EQ(bins.start, c->start + std::chrono::hours(8));
  EXPECT_EQ(bins.width, std::chrono::seconds(5));  // 200s of traffic, 100 requests: 40 bins
  EXPECT_EQ(bins.count, 40u);
}

}  // namespace
}  // namespace ratelab
