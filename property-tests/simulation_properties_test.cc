// The simulator's own promises: virtual time never goes backwards, and a seed replays exactly.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "impl/limiters/in_process_protocol.h"
#include "property-tests/traffic_gen.h"
#include "sim/event_loop.h"
#include "sim/scenario_run.h"
#include "sim/simulation.h"

namespace ratelab::proptest {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;

RC_GTEST_PROP(EventLoop, TimeNeverGoesBackwardsAndTiesRunInSchedulingOrder, ()) {
  // Each event, when it runs, schedules the next few from a list of delays (some zero).
  const auto delays = *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, 5));
  EventLoop loop(FromUnixNanos(0));
  std::vector<std::pair<Instant, int>> ran;  // (time, scheduling order)
  int scheduled = 0;
  size_t next = 0;
  std::function<void(int)> event = [&](int order) {
    ran.emplace_back(loop.now(), order);
    for (int k = 0; k < 2 && next < delays.size(); ++k) {
      const int child = ++scheduled;
      loop.After(Duration(delays[next++]), [&event, child] { event(child); });
    }
  };
  loop.At(FromUnixNanos(0), [&event] { event(0); });
  loop.RunAll();
  RC_ASSERT(ran.size() == delays.size() + 1);
  for (size_t i = 1; i < ran.size(); ++i) {
    RC_ASSERT(ran[i - 1].first <= ran[i].first);
    if (ran[i - 1].first == ran[i].first) RC_ASSERT(ran[i - 1].second < ran[i].second);
  }
}

// Counts kept in a store with durability `always` survive store restarts and node crashes:
// random traffic, random restarts, several nodes with latency, and the promise still holds.
RC_GTEST_PROP(Persistence, KvProtocolsKeepTheirPromiseAcrossRestartsWithDurabilityAlways, ()) {
  const Algorithm a = *rc::gen::element(Algorithm::kFixedWindow, Algorithm::kGcra);
  const Duration w = *rc::gen::element<Duration>(milliseconds(1), milliseconds(250),
                                                 std::chrono::seconds(1), minutes(1));
  const Policy policy{a, *rc::gen::inRange<int64_t>(1, 7), a == Algorithm::kGcra ? w / 4 : w};
  Scenario s;
  s.nodes.assign(*rc::gen::inRange<size_t>(1, 4), NodeSpec{});
  s.to_store = s.from_store = {Duration(*rc::gen::inRange<int64_t>(0, 1'000'000)),
                               Duration(*rc::gen::inRange<int64_t>(0, 1'000'000))};
  for (const char* protocol : {"kv-fixed-window-lua", "kv-gcra-lua"}) {
    if (FindProtocol(protocol)->algorithm != a) continue;
    LimiterSpec spec;
    spec.protocol = RegistryProtocol(protocol);
    spec.policy = policy;
    spec.durability = Durability::kAlways;
    s.limiters.push_back(spec);
  }
  s.claim_limit = policy.limit;
  s.claim_window = w;
  s.checks = {CheckId::kPromise};
  std::vector<Arrival> arrivals;
  const std::vector<Call> calls = *GenCalls(policy, TimeOrder::kNonDecreasing);
  for (const Call& call : calls) {
    arrivals.push_back({s.start + (call.now - calls.front().now), call.key, "/api", call.cost});
  }
  RC_PRE(!arrivals.empty());
  const int64_t span = (arrivals.back().at - s.start).count() + 1;
  s.traffic.push_back(std::make_unique<ReplayTraffic>("generated", arrivals));
  for (int i = 0, n = *rc::gen::inRange(1, 4); i < n; ++i) {
    FaultSpec f;
    f.kind = *rc::gen::element(FaultKind::kStoreRestart, FaultKind::kCrash);
    f.node = *rc::gen::inRange(0, static_cast<int>(s.nodes.size()));
    f.at = Duration(*rc::gen::inRange<int64_t>(0, span));
    f.amount = Duration(*rc::gen::inRange<int64_t>(0, w.count()));
    s.faults.push_back(f);
  }
  Result<RunResult> c = RunScenario(s, *rc::gen::arbitrary<uint64_t>());
  RC_ASSERT(c.ok());
  for (const LimiterOutcome& o : c->limiters) {
    for (const CheckResult& check : o.checks) {
      if (!check.violations.empty()) RC_FAIL(o.name + ": " + check.violations.front().ToString());
    }
  }
}

RC_GTEST_PROP(Simulation, SameSeedSameHistory, ()) {
  const Policy policy = *GenPolicy(*GenAlgorithm());
  SimulationConfig c;
  c.seed = *rc::gen::arbitrary<uint64_t>();
  c.nodes.assign(*rc::gen::inRange<size_t>(1, 4), NodeSpec{});
  for (NodeSpec& n : c.nodes) n.clock_offset = Duration(*rc::gen::inRange<int64_t>(-50, 50));
  c.to_store = {Duration(*rc::gen::inRange<int64_t>(0, 3)), Duration(*rc::gen::inRange(0, 4))};
  c.from_store = c.to_store;
  c.buggify = {*rc::gen::arbitrary<bool>(), 0.2, Duration(20)};
  std::vector<Arrival> arrivals;
  for (const Call& call : *GenCalls(policy, TimeOrder::kNonDecreasing)) {
    arrivals.push_back({call.now, call.key, "/api", call.cost});
  }
  auto run = [&] {
    Simulation sim(c, [&](int) { return std::make_unique<InProcessProtocol>(policy); });
    return sim.Run(arrivals);
  };
  const History first = run();
  RC_ASSERT(HistoryHash(first) == HistoryHash(run()));
  for (const HistoryEvent& e : first) {
    RC_ASSERT(e.invoke <= e.apply);
    RC_ASSERT(e.apply <= e.complete);
    RC_ASSERT(e.node_now - e.invoke == c.nodes[static_cast<size_t>(e.node)].clock_offset);
  }
}

}  // namespace
}  // namespace ratelab::proptest
