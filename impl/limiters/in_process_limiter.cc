#include "impl/limiters/in_process_limiter.h"

#include <atomic>

#include "impl/limiters/in_process_algorithms.h"
#include "impl/limiters/sharded_state_map.h"

namespace ratelab {

namespace {

constexpr Duration kIdleGrace = std::chrono::seconds(1);

template <typename Algorithm>
class ShardedLimiter final : public InProcessLimiter {
 public:
  using State = typename Algorithm::State;
  using Map = internal::ShardedStateMap<State>;

  ShardedLimiter(const Policy& policy, size_t max_keys)
      : InProcessLimiter(policy), algorithm_(policy), states_(max_keys) {}

  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    const int64_t t = ToUnixNanos(now);
    return states_.With(
        key, t, [&](State& s) { return algorithm_.Decide(s, now, cost); },
        [&](typename Map::Locked shard) {
          // Idle a little before `now`, so that a request another thread read its clock for a
          // moment earlier finds its key as it was.
          const int64_t before = t - kIdleGrace.count();
          idle_.fetch_add(static_cast<int64_t>(shard.EraseIf(
                              [&](const State& s) { return algorithm_.Idle(s, before); })),
                          std::memory_order_relaxed);
          // Still full: the least recently used eighth goes.
          if (shard.size() >= shard.cap()) {
            in_use_.fetch_add(static_cast<int64_t>(
                                  shard.EvictLeastRecentlyUsed(shard.cap() - 1 - shard.cap() / 8)),
                              std::memory_order_relaxed);
          }
        });
  }
  Decision Peek(std::string_view key, Instant now, int64_t cost) override {
    typename Algorithm::State copy = states_.Copy(key);
    Decision d = algorithm_.Decide(copy, now, cost);
    if (d.allowed) d.remaining += cost;
    return d;
  }
  void Clear() override { states_.Clear(); }
  int64_t DropIdle(Instant now) override {
    const int64_t t = ToUnixNanos(now);
    const auto dropped = static_cast<int64_t>(
        states_.EraseIf([&](const State& s) { return algorithm_.Idle(s, t); }));
    idle_.fetch_add(dropped, std::memory_order_relaxed);
    return dropped;
  }
  int64_t KeyCount() const override { return static_cast<int64_t>(states_.Size()); }
  Evictions evictions() const override {
    return {idle_.load(std::memory_order_relaxed), in_use_.load(std::memory_order_relaxed)};
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
  mutable Map states_;
  std::atomic<int64_t> idle_{0};
  std::atomic<int64_t> in_use_{0};
};

}  // namespace

std::unique_ptr<InProcessLimiter> MakeInProcessLimiter(const Policy& policy, size_t max_keys) {
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
      return std::make_unique<ShardedLimiter<internal::FixedWindowCounter>>(policy, max_keys);
    case Algorithm::kSlidingLog:
      return std::make_unique<ShardedLimiter<internal::SlidingLog>>(policy, max_keys);
    case Algorithm::kSlidingCounter:
      return std::make_unique<ShardedLimiter<internal::SlidingCounter>>(policy, max_keys);
    case Algorithm::kTokenBucket:
    case Algorithm::kTokenBucketCredit:
      return std::make_unique<ShardedLimiter<internal::TokenBucket>>(policy, max_keys);
    case Algorithm::kGcra:
      return std::make_unique<ShardedLimiter<internal::Gcra>>(policy, max_keys);
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen:
      return std::make_unique<ShardedLimiter<internal::AnchoredWindow>>(policy, max_keys);
    case Algorithm::kSlidingLogClosed:
      return std::make_unique<ShardedLimiter<internal::SlidingLog>>(policy, max_keys);
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return std::make_unique<ShardedLimiter<internal::SlidingCounter>>(policy, max_keys);
    case Algorithm::kTokenBucketIntervals:
      return std::make_unique<ShardedLimiter<internal::TokenBucketIntervals>>(policy, max_keys);
  }
  return nullptr;
}

}  // namespace ratelab
