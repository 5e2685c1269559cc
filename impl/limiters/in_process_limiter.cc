#include "impl/limiters/in_process_limiter.h"

#include "impl/limiters/in_process_algorithms.h"
#include "impl/limiters/sharded_state_map.h"

namespace ratelab {

namespace {

template <typename Algorithm>
class ShardedLimiter final : public InProcessLimiter {
 public:
  explicit ShardedLimiter(const Policy& policy) : InProcessLimiter(policy), algorithm_(policy) {}

  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    return states_.With(
        key, [&](typename Algorithm::State& s) { return algorithm_.Decide(s, now, cost); });
  }
  Decision Peek(std::string_view key, Instant now, int64_t cost) override {
    typename Algorithm::State copy = states_.Copy(key);
    Decision d = algorithm_.Decide(copy, now, cost);
    if (d.allowed) d.remaining += cost;
    return d;
  }
  void Clear() override { states_.Clear(); }
  int64_t KeyCount() const override {
    int64_t n = 0;
    states_.ForEach([&](const auto&) { ++n; });
    return n;
  }
  int64_t StateBytes() const override {
    int64_t bytes = 0;
    states_.ForEach([&](const typename Algorithm::State& s) {
      bytes += static_cast<int64_t>(sizeof(s)) + Algorithm::ExtraBytes(s);
    });
    return bytes;
  }

 private:
  const Algorithm algorithm_;
  mutable internal::ShardedStateMap<typename Algorithm::State> states_;
};

}  // namespace

std::unique_ptr<InProcessLimiter> MakeInProcessLimiter(const Policy& policy) {
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
      return std::make_unique<ShardedLimiter<internal::FixedWindowCounter>>(policy);
    case Algorithm::kSlidingLog:
      return std::make_unique<ShardedLimiter<internal::SlidingLog>>(policy);
    case Algorithm::kSlidingCounter:
      return std::make_unique<ShardedLimiter<internal::SlidingCounter>>(policy);
    case Algorithm::kTokenBucket:
      return std::make_unique<ShardedLimiter<internal::TokenBucket>>(policy);
    case Algorithm::kGcra:
      return std::make_unique<ShardedLimiter<internal::Gcra>>(policy);
    case Algorithm::kAnchoredWindow:
      return std::make_unique<ShardedLimiter<internal::AnchoredWindow>>(policy);
    case Algorithm::kSlidingLogClosed:
      return std::make_unique<ShardedLimiter<internal::SlidingLog>>(policy);
    case Algorithm::kSlidingCounterAnchored:
      return std::make_unique<ShardedLimiter<internal::SlidingCounter>>(policy);
    case Algorithm::kTokenBucketIntervals:
      return std::make_unique<ShardedLimiter<internal::TokenBucketIntervals>>(policy);
  }
  return nullptr;
}

}  // namespace ratelab
