#include "impl/limiters/in_process_limiter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "impl/core/step.h"
#include "impl/limiters/in_process_protocol.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

const Instant kT0 = FromUnixNanos(1'700'000'000'000'000'000);

std::vector<Policy> EveryAlgorithmAtLimit(int64_t n) {
  return {Policy::Window(Algorithm::kFixedWindow, n, minutes(1)),
          Policy::Window(Algorithm::kSlidingLog, n, minutes(1)),
          Policy::Window(Algorithm::kSlidingCounter, n, minutes(1)),
          Policy::Bucket(Algorithm::kTokenBucket, n, seconds(10)),
          Policy::Bucket(Algorithm::kGcra, n, seconds(10))};
}

TEST(InProcessLimiter, TwoThreadsOnOneKeyAdmitExactlyTheLimit) {
  for (const Policy& policy : EveryAlgorithmAtLimit(1000)) {
    auto limiter = MakeInProcessLimiter(policy);
    std::atomic<int64_t> admitted{0};
    auto hammer = [&] {
      for (int i = 0; i < 5000; ++i) admitted += limiter->Decide("hot", kT0, 1).allowed;
    };
    std::thread a(hammer), b(hammer);
    a.join();
    b.join();
    EXPECT_EQ(admitted.load(), 1000) << policy.ToString();
    EXPECT_EQ(limiter->KeyCount(), 1);
  }
}

TEST(InProcessLimiter, ClearForgetsEveryKey) {
  for (const Policy& policy : EveryAlgorithmAtLimit(1)) {
    auto limiter = MakeInProcessLimiter(policy);
    EXPECT_TRUE(limiter->Decide("k", kT0, 1).allowed);
    EXPECT_FALSE(limiter->Decide("k", kT0, 1).allowed) << policy.ToString();
    limiter->Clear();
    EXPECT_EQ(limiter->KeyCount(), 0);
    EXPECT_TRUE(limiter->Decide("k", kT0, 1).allowed) << policy.ToString();
  }
}

TEST(InProcessLimiter, SlidingLogStateGrowsWithAdmissionsAndShrinksAsTheyExpire) {
  auto limiter = MakeInProcessLimiter(Policy::Window(Algorithm::kSlidingLog, 100, seconds(1)));
  for (int i = 0; i < 100; ++i) limiter->Decide("k", kT0 + milliseconds(i), 1);
  const int64_t full = limiter->StateBytes();
  EXPECT_GE(full, 100 * 16);
  for (int i = 0; i < 200; ++i) limiter->Decide("k", kT0 + seconds(2) + milliseconds(i * 10), 1);
  EXPECT_LE(limiter->StateBytes(), 2 * full) << "expired entries are compacted away";
}

TEST(InProcessLimiter, DropIdleDropsOnlyKeysWhoseStateNoLongerMatters) {
  for (const Policy& policy : EveryAlgorithmAtLimit(2)) {
    auto limiter = MakeInProcessLimiter(policy);
    for (int i = 0; i < 1000; ++i) limiter->Decide("old" + std::to_string(i), kT0, 1);
    limiter->Decide("busy", kT0 + minutes(5), 1);
    limiter->Decide("busy", kT0 + minutes(5), 1);
    EXPECT_EQ(limiter->DropIdle(kT0 + minutes(5)), 1000) << policy.ToString();
    EXPECT_EQ(limiter->KeyCount(), 1);
    EXPECT_EQ(limiter->evictions().idle, 1000);
    EXPECT_FALSE(limiter->Decide("busy", kT0 + minutes(5), 1).allowed)
        << policy.ToString() << ": a key in use keeps its count";
  }
}

TEST(InProcessLimiter, AFullLimiterDropsItsLeastRecentlyUsedKeys) {
  for (const Policy& policy : EveryAlgorithmAtLimit(3)) {
    auto limiter = MakeInProcessLimiter(policy, /*max_keys=*/6400);
    // A hot key used all along, among 100,000 keys each seen once, all within one window.
    for (int i = 0; i < 100'000; ++i) {
      const Instant now = kT0 + milliseconds(i / 100);
      limiter->Decide("k" + std::to_string(i), now, 1);
      if (i % 1000 == 0) limiter->Decide("hot", now, 1);
      ASSERT_LE(limiter->KeyCount(), 6400) << policy.ToString();
    }
    EXPECT_GT(limiter->evictions().in_use, 90'000) << policy.ToString();
    EXPECT_FALSE(limiter->Decide("hot", kT0 + seconds(1), 1).allowed)
        << policy.ToString() << ": the most recently used key was kept, with its count";
    EXPECT_TRUE(limiter->Decide("k0", kT0 + seconds(1), 1).allowed)
        << policy.ToString() << ": the least recently used key starts afresh";
  }
}

TEST(InProcessLimiter, AFullLimiterDropsIdleKeysBeforeKeysInUse) {
  auto limiter = MakeInProcessLimiter(Policy::Window(Algorithm::kFixedWindow, 1, seconds(1)),
                                      /*max_keys=*/64 * 100);
  // Half the bound (each shard well below its 100), then as many again a minute later, when
  // every old key is idle: room is made of them, not of the new ones.
  for (int i = 0; i < 3200; ++i) limiter->Decide("then" + std::to_string(i), kT0, 1);
  for (int i = 0; i < 3200; ++i) limiter->Decide("now" + std::to_string(i), kT0 + minutes(1), 1);
  EXPECT_EQ(limiter->evictions().in_use, 0);
  EXPECT_GT(limiter->evictions().idle, 0);
  for (int i = 0; i < 3200; i += 97) {
    EXPECT_FALSE(limiter->Decide("now" + std::to_string(i), kT0 + minutes(1), 1).allowed);
  }
}

TEST(InProcessProtocol, DecidesThroughOneInlineStep) {
  InlineExecutor executor;
  Context ctx(executor);
  InProcessProtocol protocol(Policy::Window(Algorithm::kFixedWindow, 1, minutes(1)));
  Request r{"user", "u1", "/api", 1, kT0};
  Result<Decision> first = RunInline(protocol.Decide(ctx, r));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->allowed);
  EXPECT_FALSE(RunInline(protocol.Decide(ctx, r))->allowed);
  protocol.Restart();
  EXPECT_TRUE(RunInline(protocol.Decide(ctx, r))->allowed)
      << "an in-process limiter forgets on restart";
}

TEST(InProcessProtocol, RejectsAnInvalidRequestWithoutDeciding) {
  InlineExecutor executor;
  Context ctx(executor);
  InProcessProtocol protocol(Policy::Window(Algorithm::kFixedWindow, 1, minutes(1)));
  Request r{"user", "u1", "/api", 0, kT0};
  EXPECT_EQ(RunInline(protocol.Decide(ctx, r)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(protocol.limiter().KeyCount(), 0);
}

}  // namespace
}  // namespace ratelab
