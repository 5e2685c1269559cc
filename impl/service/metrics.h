// What a service counts, for GET /metrics in Prometheus' text format (version 0.0.4): decisions
// by outcome and rule, the time each request took, store failures by kind, the breaker's
// state, and what its carriers count (the HTTP server's connections, the in-process keys). One
// service's, shared by its threads: each thread counts in a shard of its own (so that threads do
// not contend for one lock or one cache line a request), and the text sums them. Thread-safe.
#ifndef RATELAB_IMPL_SERVICE_METRICS_H_
#define RATELAB_IMPL_SERVICE_METRICS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/limiters/failure_policy.h"
#include "impl/service/http_server.h"
#include "model/time.h"

namespace ratelab {

class ServiceMetrics {
 public:
  // What a decision was: admitted or denied, by the store or (degraded) without it.
  enum class Outcome { kAllowed, kDenied, kDegradedAllowed, kDegradedDenied };
  static constexpr size_t kOutcomes = 4;
  // "allowed", "denied", "degraded-allowed", "degraded-denied".
  static std::string_view Name(Outcome outcome);
  static Outcome OutcomeOf(bool allowed, bool degraded) {
    return static_cast<Outcome>((allowed ? 0 : 1) + (degraded ? 2 : 0));
  }
  // The histogram's upper bounds, in seconds.
  static constexpr std::array<double, 10> kBounds = {0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                     0.0025,  0.005,  0.01,    0.05,   0.25};

  // One thread's counts. Thread-safe, but meant for one thread: its lock is only ever waited
  // for while the text is written.
  class Shard {
   public:
    // A decision, by the rule that answered ("" for none).
    void Decided(Outcome outcome, std::string_view rule_id);
    // A call to the store that failed: "timeout" (DeadlineExceeded) or "error".
    void StoreFailed(const Status& status);
    // How long a request took, from read to answer.
    void Took(Duration d);

   private:
    friend class ServiceMetrics;
    using Counts = std::array<int64_t, kOutcomes>;  // by Outcome

    mutable std::mutex mutex_;  // guards what follows
    // rule -> its decisions; found by a rule's id without copying it.
    std::map<std::string, Counts, std::less<>> decisions_;
    std::array<int64_t, 2> store_failures_{};        // error, timeout
    std::array<int64_t, kBounds.size()> buckets_{};  // not cumulative
    int64_t count_ = 0;
    Duration sum_{};
  };

  // A new shard, counted in the text from now on; it lives as long as the metrics.
  Shard& NewShard();

  // The in-process counters' keys: held now, and dropped so far (idle, or still in use to stay
  // within a bound).
  struct Keys {
    int64_t held = 0;
    int64_t dropped_idle = 0;
    int64_t evicted_in_use = 0;
  };
  // What is read each time the text is written, beside the decisions; either may be empty. Set
  // before the service answers (thread-safe).
  struct Sources {
    std::function<HttpServerCounts()> connections;
    std::function<Keys()> keys;
  };
  void SetSources(Sources sources);

  // The text of GET /metrics, every shard summed; the breaker's state when there is one.
  std::string Prometheus(std::optional<StoreGuard::Breaker> breaker) const;

 private:
  mutable std::mutex mutex_;  // guards shards_ (not what is in them) and sources_
  std::deque<Shard> shards_;  // never moved
  Sources sources_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_METRICS_H_
