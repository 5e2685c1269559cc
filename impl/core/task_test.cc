#include "impl/core/task.h"

#include <gtest/gtest.h>

#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include "impl/core/step.h"

namespace ratelab {
namespace {

// An executor that queues steps until the test applies and resumes them one by one.
class QueueExecutor final : public Executor {
 public:
  bool RunsInline() const override { return false; }
  void Submit(PendingStep& step) override { queue.push_back(&step); }
  // Applies and resumes the oldest queued step.
  void RunOne() {
    PendingStep* step = queue.front();
    queue.pop_front();
    step->Apply();
    step->resume.resume();
  }
  std::deque<PendingStep*> queue;
};

// A two-step protocol over a shared counter: read, then write (racy on purpose).
Task<int> ReadThenIncrement(Context& ctx, int& counter, std::vector<std::string>& log) {
  const int seen = co_await ctx.Step("GET", [&] {
    log.push_back("read " + std::to_string(counter));
    return counter;
  });
  co_await ctx.Step("SET", [&] {
    counter = seen + 1;
    log.push_back("write " + std::to_string(counter));
    return 0;
  });
  co_return seen + 1;
}

Task<int> Outer(Context& ctx, int& counter, std::vector<std::string>& log) {
  const int a = co_await ReadThenIncrement(ctx, counter, log);
  co_return a * 10;
}

// A shared counter, a log of store operations, and a queueing executor.
class QueuedTask : public ::testing::Test {
 protected:
  QueueExecutor queue;
  Context ctx{queue};
  int counter = 0;
  std::vector<std::string> log;
};

TEST(Task, InlineExecutorRunsEveryStepWithoutSuspending) {
  InlineExecutor inline_executor;
  Context ctx(inline_executor);
  int counter = 0;
  std::vector<std::string> log;
  Task<int> t = Outer(ctx, counter, log);
  EXPECT_FALSE(t.done()) << "tasks are lazy";
  EXPECT_EQ(RunInline(std::move(t)), 10);
  EXPECT_EQ(log, (std::vector<std::string>{"read 0", "write 1"}));
}

TEST_F(QueuedTask, StepsOfTwoRequestsInterleaveAndLoseAnUpdate) {
  Task<int> a = ReadThenIncrement(ctx, counter, log);
  Task<int> b = ReadThenIncrement(ctx, counter, log);
  a.Start();
  b.Start();
  ASSERT_EQ(queue.queue.size(), 2u);  // both reads pending
  queue.RunOne();                     // a reads 0
  queue.RunOne();                     // b reads 0
  queue.RunOne();                     // a writes 1
  queue.RunOne();                     // b writes 1
  ASSERT_TRUE(a.done() && b.done());
  EXPECT_EQ(counter, 1) << "the read-then-write race the simulator must be able to reach";
  EXPECT_EQ(log, (std::vector<std::string>{"read 0", "read 0", "write 1", "write 1"}));
}

TEST_F(QueuedTask, DestroyingASuspendedTaskDropsItsPendingStep) {
  {
    Task<int> t = Outer(ctx, counter, log);
    t.Start();
    queue.RunOne();  // the read happens
    ASSERT_EQ(queue.queue.size(), 1u);
  }  // crash: the task (and the nested one it awaits) is destroyed before its write
  queue.queue.clear();
  EXPECT_EQ(counter, 0);
  EXPECT_EQ(log, (std::vector<std::string>{"read 0"}));
}

TEST_F(QueuedTask, StepCarriesItsLabel) {
  Task<int> t = ReadThenIncrement(ctx, counter, log);
  t.Start();
  EXPECT_EQ(queue.queue.front()->label(), "GET");
}

// A step whose result the coroutine cannot use: it throws after the step (as a JSON writer given
// bytes that are not UTF-8 does).
Task<int> ThrowsAfterAStep(Context& ctx) {
  const int seen = co_await ctx.Step("GET", [] { return 1; });
  if (seen == 1) throw std::runtime_error("cannot write that");
  co_return seen;
}

Task<int> AwaitsOneThatThrows(Context& ctx, bool& after) {
  const int v = co_await ThrowsAfterAStep(ctx);
  after = true;  // never reached
  co_return v;
}

TEST(Task, AnExceptionReachesTheDriverInsteadOfEndingTheProcess) {
  InlineExecutor inline_executor;
  Context ctx(inline_executor);
  bool after = false;
  EXPECT_THROW(RunInline(AwaitsOneThatThrows(ctx, after)), std::runtime_error);
  EXPECT_FALSE(after) << "the awaiting coroutine's body stops where the exception reaches it";
}

TEST_F(QueuedTask, AnExceptionAfterAResumedStepIsThrownByResult) {
  bool after = false;
  Task<int> t = AwaitsOneThatThrows(ctx, after);
  t.Start();
  ASSERT_EQ(queue.queue.size(), 1u);
  queue.RunOne();  // the step is applied; the coroutine then throws
  ASSERT_TRUE(t.done());
  EXPECT_THROW(t.result(), std::runtime_error);
  EXPECT_FALSE(after);
}

// A coroutine passed a Context with a pool takes its frame there, and the frames of the
// coroutines it awaits with that Context too: each goes back when its task ends or is destroyed
// suspended, and the next request takes it again. Without a pool, frames are the heap's.
TEST_F(QueuedTask, FramesComeFromTheContextsPoolAndGoBackToIt) {
  FramePool pool;
  for (int round = 0; round < 3; ++round) {
    Context pooled(queue, round, &pool);
    Task<int> t = Outer(pooled, counter, log);
    t.Start();
    EXPECT_EQ(pool.kept(), 0u) << "round " << round << ": both frames taken again";
    queue.RunOne();
    queue.RunOne();
    ASSERT_TRUE(t.done());
    EXPECT_EQ(t.result(), (round + 1) * 10);
    EXPECT_EQ(pool.kept(), 1u) << "the inner frame went back at its end";
  }
  {
    Context pooled(queue, 9, &pool);
    Task<int> t = Outer(pooled, counter, log);
    t.Start();
    EXPECT_EQ(pool.kept(), 0u);
  }  // destroyed while suspended: both frames go back
  EXPECT_EQ(pool.kept(), 2u);
  queue.queue.clear();
  Context heap(queue);
  Task<int> t = Outer(heap, counter, log);
  t.Start();
  EXPECT_EQ(pool.kept(), 2u) << "a Context without a pool takes nothing from it";
}

}  // namespace
}  // namespace ratelab
