// The built-in scenario of `ratelab demo`.
#include "sim/scenario.h"

namespace ratelab {

Scenario DemoScenario() {
  using std::chrono::milliseconds;
  using std::chrono::minutes;
  using std::chrono::seconds;
  Scenario s;
  s.name = "demo";
  s.description =
      "Every algorithm in process on the same traffic: a steady user a little over the limit, a "
      "boundary attack, a burst, and many users with Zipf popularity.";
  const int64_t n = 5;
  const Duration w = minutes(1);
  // The bucket algorithms get the same long-run rate: a burst of N, then one per W / N.
  for (const Policy& p :
       {Policy::Window(Algorithm::kFixedWindow, n, w), Policy::Window(Algorithm::kSlidingLog, n, w),
        Policy::Window(Algorithm::kSlidingCounter, n, w),
        Policy::Bucket(Algorithm::kTokenBucket, n, w / n),
        Policy::Bucket(Algorithm::kGcra, n, w / n)}) {
    LimiterSpec spec;
    spec.protocol = RegistryProtocol("memory-" + std::string(AlgorithmName(p.algorithm)));
    spec.policy = p;
    s.limiters.push_back(spec);
  }
  s.claim_limit = n;
  s.claim_window = w;
  s.traffic.push_back(std::make_unique<ConstantTraffic>("steady", s.start, seconds(10), 30));
  s.traffic.push_back(std::make_unique<BoundaryAttackTraffic>("attacker", s.start + minutes(2),
                                                              milliseconds(500), n));
  s.traffic.push_back(
      std::make_unique<BurstTraffic>("bursty", s.start + minutes(3) + seconds(30), 12));
  s.traffic.push_back(
      std::make_unique<ZipfUsersTraffic>(40, 1.1, s.start, minutes(5), milliseconds(1500)));
  return s;
}

}  // namespace ratelab
