// What a service counts, for GET /metrics in Prometheus' text format (version 0.0.4): decisions
// by outcome and rule, the time each request took, store failures by kind, and the breaker's
// state. One service's, shared by its threads: thread-safe.
#ifndef RATELAB_IMPL_SERVICE_METRICS_H_
#define RATELAB_IMPL_SERVICE_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "impl/core/status.h"
#include "impl/limiters/failure_policy.h"
#include "model/time.h"

namespace ratelab {

class ServiceMetrics {
 public:
  // A decision: "allowed" or "denied", or "degraded-allowed" / "degraded-denied" (made without
  // the store), by the rule that answered ("" for none).
  void Decided(std::string_view outcome, std::string_view rule_id);
  // A call to the store that failed: "timeout" (DeadlineExceeded) or "error".
  void StoreFailed(const Status& status);
  // How long a request took, from read to answer.
  void Took(Duration d);

  // The text of GET /metrics; the breaker's state when there is one.
  std::string Prometheus(std::optional<StoreGuard::Breaker> breaker) const;

  // The histogram's upper bounds, in seconds.
  static constexpr std::array<double, 10> kBounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                     0.0025,  0.005,  0.01,    0.05,   0.25};

 private:
  mutable std::mutex mutex_;                                          // guards what follows
  std::map<std::pair<std::string, std::string>, int64_t> decisions_;  // (outcome, rule) -> n
  std::map<std::string, int64_t> store_failures_;
  std::array<int64_t, kBounds.size()> buckets_{};  // not cumulative
  int64_t count_ = 0;
  Duration sum_{};
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_METRICS_H_
