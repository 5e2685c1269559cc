// A script's step as the store and the executor see it: its words (EvalArgv's, then the keys and
// the args, in order), and its label, made only for an executor that reads labels.
#include "impl/limiters/kv_steps.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/store/kv_step.h"
#include "impl/store/memory_kv.h"
#include "impl/store/redis_kv.h"
#include "impl/store/redis_pipeline.h"

namespace ratelab {
namespace {

// Queues the steps until the test runs them; reads their labels or not, as it is told.
class QueueExecutor final : public Executor {
 public:
  explicit QueueExecutor(bool reads_labels) : reads_labels_(reads_labels) {}
  bool RunsInline() const override { return false; }
  void Submit(PendingStep& step) override { queue.push_back(&step); }
  bool ReadsLabels() const override { return reads_labels_; }
  // Applies and resumes every step, and those their requests submit next.
  void RunAll() {
    while (!queue.empty()) {
      PendingStep* step = queue.front();
      queue.pop_front();
      step->Apply();
      step->resume.resume();
    }
  }
  std::deque<PendingStep*> queue;

 private:
  const bool reads_labels_;
};

TEST(KvEval, AScriptStepIsLabelledOnlyForAnExecutorThatReadsLabels) {
  const ManualClock clock(FromUnixNanos(1'700'000'000'000'000'000));
  const Policy policy = Policy::Bucket(Algorithm::kGcra, 5, std::chrono::seconds(1));
  const Request request{"user", "u1", "/api", 1, clock.Now()};
  for (const bool reads_labels : {true, false}) {
    SCOPED_TRACE(reads_labels ? "reads labels" : "reads none");
    MemoryKv kv(clock);
    KvGcraLua gcra(kv, policy);
    QueueExecutor executor(reads_labels);
    Context ctx(executor);
    Task<Result<Decision>> decision = gcra.Decide(ctx, request);
    decision.Start();
    ASSERT_EQ(executor.queue.size(), 1u);
    const PendingStep& step = *executor.queue.front();
    ASSERT_EQ(step.kind(), PendingStep::Kind::kKvCommand);
    // The words the store is sent: EvalArgv's, the key, then the arguments, in that order.
    const auto& command = static_cast<const KvCommandStep&>(step);
    const std::vector<std::string> argv(command.argv().begin(), command.argv().end());
    ASSERT_EQ(argv.size(), 9u);
    EXPECT_EQ(argv[0], "EVALSHA");
    EXPECT_EQ(argv[1], KvGcraLua::Script().sha);
    EXPECT_EQ(argv[2], "1");
    EXPECT_EQ(argv[3], "rl:{user:u1:/api}");
    EXPECT_EQ(argv[4], std::to_string(UnixMillis(clock.Now()) * 1000));  // now, microseconds
    EXPECT_EQ(argv[6], "5");                                             // the limit
    // The script by name, then its words after the SHA-1.
    EXPECT_EQ(step.label(), reads_labels
                                ? "EVALSHA " + KvGcraLua::Script().name + " 1 rl:{user:u1:/api} " +
                                      argv[4] + " 1000000 5 1 " + argv[8]
                                : "");
    // The same decision either way (the store had no script: EVAL after NOSCRIPT, a second step).
    executor.RunAll();
    ASSERT_TRUE(decision.done());
    ASSERT_TRUE(decision.result().ok()) << decision.result().status();
    EXPECT_TRUE(decision.result()->allowed);
    EXPECT_EQ(decision.result()->remaining, 4);
  }
}

TEST(KvEval, ExecutorsOfARealStoreReadNoLabelAndTheOthersDo) {
  InlineExecutor inline_executor;
  EXPECT_FALSE(inline_executor.ReadsLabels());
  EXPECT_FALSE(Context(inline_executor).labelled());
  RedisKv redis(*ParseRedisUrl("unix:///nonexistent/ratelab.sock"));  // never connected
  RedisPipeline pipeline(redis);
  EXPECT_FALSE(Context(pipeline).labelled());
  // An executor that says nothing reads them (a simulation's, a stress run's).
  QueueExecutor reads(true);
  EXPECT_TRUE(Context(reads).labelled());
}

}  // namespace
}  // namespace ratelab
