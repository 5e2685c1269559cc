#include "sim/demo_scenario.h"

#include <memory>

#include "impl/limiters/in_process_protocol.h"
#include "model/oracles.h"
#include "sim/sequential_run.h"
#include "sim/traffic.h"

namespace ratelab {

namespace {
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
}  // namespace

Result<Comparison> RunDemoScenario(uint64_t seed) {
  const Instant start = FromUnixNanos(0) + hours(12);
  const int64_t n = 5;
  const Duration w = minutes(1);

  std::vector<std::unique_ptr<TrafficGenerator>> traffic;
  traffic.push_back(std::make_unique<ConstantTraffic>("steady", start, seconds(10), 30));
  traffic.push_back(std::make_unique<BoundaryAttackTraffic>("attacker", start + minutes(2),
                                                            milliseconds(500), n));
  traffic.push_back(std::make_unique<BurstTraffic>("bursty", start + minutes(3) + seconds(30), 12));
  traffic.push_back(
      std::make_unique<ZipfUsersTraffic>(40, 1.1, start, minutes(5), milliseconds(1500)));
  const std::vector<Arrival> arrivals = GenerateAll(traffic, Random(seed));

  Comparison c{seed, {}, n, w, {}};
  for (const auto& g : traffic) c.traffic.push_back(g->Describe());
  // The bucket algorithms get the same long-run rate: a burst of N, then one per W / N.
  const std::vector<Policy> policies = {Policy::Window(Algorithm::kFixedWindow, n, w),
                                        Policy::Window(Algorithm::kSlidingLog, n, w),
                                        Policy::Window(Algorithm::kSlidingCounter, n, w),
                                        Policy::Bucket(Algorithm::kTokenBucket, n, w / n),
                                        Policy::Bucket(Algorithm::kGcra, n, w / n)};
  for (const Policy& policy : policies) {
    InProcessProtocol protocol(policy);
    Result<History> history = RunSequential(protocol, arrivals);
    if (!history.ok()) return history.status();
    LimiterOutcome o;
    o.protocol = "memory-" + std::string(Describe(policy.algorithm).name);
    o.policy = policy;
    o.offered = static_cast<int64_t>(history->size());
    for (const HistoryEvent& e : *history) {
      o.admitted += e.admitted();
      o.denied += e.denied();
    }
    AnyWindowReport any = CheckAnyWindowCap(*history, n, w);
    o.max_in_any_window = any.max_in_any_window;
    o.any_window_violations = std::move(any.violations);
    o.promise_violations = CheckPromise(*history, policy);
    o.history = *std::move(history);
    c.limiters.push_back(std::move(o));
  }
  return c;
}

}  // namespace ratelab
