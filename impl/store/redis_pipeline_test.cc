// RedisPipeline against a real redis-server: the steps of many coroutines sent a round at a
// time, each answered with its own reply.
#include "impl/store/redis_pipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "impl/core/task.h"
#include "impl/store/kv_step.h"
#include "impl/store/redis_server.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

using Argv = std::vector<std::string>;

// Two steps on `key`: INCR, then INCRBY the first reply; the second reply is 2 * (n + 1) for a
// key that held n.
Task<Result<KvReply>> IncrTwice(Context& ctx, Kv& kv, std::string key) {
  Argv incr = {"INCR", key};
  Result<KvReply> first = co_await ctx.Step("INCR", [&] { return kv.Execute(incr); });
  if (!first.ok()) co_return first;
  Argv incrby = {"INCRBY", key, std::to_string(first->integer)};
  co_return co_await ctx.Step("INCRBY", [&] { return kv.Execute(incrby); });
}

// The same two steps, each one command (as every kv protocol's step is): sent as they are, each
// answered by its place in the round, none applied twice.
Task<Result<KvReply>> IncrTwiceByCommands(Context& ctx, Kv& kv, std::string key) {
  const Argv incr = {"INCR", key};
  Result<KvReply> first = co_await KvCommandStep(ctx, "INCR", kv, incr);
  if (!first.ok()) co_return first;
  const Argv incrby = {"INCRBY", key, std::to_string(first->integer)};
  co_return co_await KvCommandStep(ctx, "INCRBY", kv, incrby);
}

// `n` coroutines on keys k0..k(n-1), run by `pipeline`, every other one of IncrTwiceByCommands
// and the rest of IncrTwice: their results.
std::vector<Result<KvReply>> RunMany(RedisPipeline& pipeline, int n) {
  std::deque<Context> contexts;
  std::vector<Task<Result<KvReply>>> tasks;
  for (int i = 0; i < n; ++i) {
    contexts.emplace_back(pipeline);
    const std::string key = "k" + std::to_string(i);
    tasks.push_back(i % 2 == 0 ? IncrTwiceByCommands(contexts.back(), pipeline, key)
                               : IncrTwice(contexts.back(), pipeline, key));
    tasks.back().Start();
  }
  pipeline.Run();
  std::vector<Result<KvReply>> out;
  for (Task<Result<KvReply>>& t : tasks) {
    EXPECT_TRUE(t.done());
    out.push_back(t.done() ? t.result() : absl::InternalError("not done"));
  }
  return out;
}

TEST(RedisPipelineTest, EachRoundIsOneRoundTripAndEachStepGetsItsOwnReply) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv redis(server->endpoint());
  RedisPipeline pipeline(redis);
  // Outside a run, a command is sent at once.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(*pipeline.Execute(Argv{"SET", "k" + std::to_string(i), std::to_string(i)}),
              KvReply::Ok());
  }
  const std::vector<Result<KvReply>> results = RunMany(pipeline, 10);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(*results[i], KvReply::Integer(2 * (i + 1))) << "k" << i;
  }
  EXPECT_EQ(pipeline.steps(), 20);
  EXPECT_EQ(pipeline.rounds(), 2) << "ten first steps in one round, ten second steps in another";
}

TEST(RedisPipelineTest, AStepThatIsOneCommandIsSentAsItIsAndNotReplayed) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv redis(server->endpoint());
  RedisPipeline pipeline(redis);
  for (const Result<KvReply>& r : RunMany(pipeline, 10)) {
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, KvReply::Integer(2));
  }
  EXPECT_EQ(pipeline.steps(), 20);
  EXPECT_EQ(pipeline.rounds(), 2);
  EXPECT_EQ(pipeline.replayed(), 10) << "only the steps that are not one command";
  // On another Kv (a wrapper of the pipeline), a command step is applied as any other.
  KvWrapper around(pipeline);
  Context ctx(pipeline);
  Task<Result<KvReply>> other = IncrTwiceByCommands(ctx, around, "k0");
  other.Start();
  pipeline.Run();
  ASSERT_TRUE(other.done() && other.result().ok());
  EXPECT_EQ(*other.result(), KvReply::Integer(6));
  EXPECT_EQ(pipeline.replayed(), 12);
}

// A round's wait runs from when its oldest step was submitted, which may be long before the round
// is sent: a step that waited while the round before it was out (serve's rounds).
TEST(RedisPipelineTest, ARoundIsDueFromWhenItsOldestStepWasSubmitted) {
  using Steady = std::chrono::steady_clock;
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv redis(server->endpoint());
  RedisPipeline pipeline(redis);
  Context first_ctx(pipeline), second_ctx(pipeline);
  const Steady::time_point before_first = Steady::now();
  Task<Result<KvReply>> first = IncrTwiceByCommands(first_ctx, pipeline, "a");
  first.Start();
  ASSERT_TRUE(pipeline.Send());
  EXPECT_GE(pipeline.submitted(), before_first);
  // While the first round is out, the second request's step waits.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const Steady::time_point before_second = Steady::now();
  Task<Result<KvReply>> second = IncrTwiceByCommands(second_ctx, pipeline, "b");
  second.Start();
  const Steady::time_point after_second = Steady::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_LT(pipeline.submitted(), before_second) << "the round out is the first request's";
  pipeline.Receive();  // the first request's next step joins the second's
  const Steady::time_point before_send = Steady::now();
  ASSERT_TRUE(pipeline.Send());
  EXPECT_GE(pipeline.submitted(), before_second);
  EXPECT_LE(pipeline.submitted(), after_second) << "not when the round was sent";
  EXPECT_LT(pipeline.submitted(), before_send);
  pipeline.Receive();
  pipeline.Run();  // the second request's last step
  ASSERT_TRUE(first.done() && second.done());
  EXPECT_EQ(*first.result(), KvReply::Integer(2));
  EXPECT_EQ(*second.result(), KvReply::Integer(2));
}

TEST(RedisPipelineTest, AServerGoneFailsEveryStepOfItsRound) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv redis(server->endpoint());
  RedisPipeline pipeline(redis);
  ASSERT_TRUE(redis.Connect().ok());
  ASSERT_TRUE(server->Kill().ok());
  for (const Result<KvReply>& r : RunMany(pipeline, 3)) {
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  }
  // And the next run, on a server started again, reconnects.
  ASSERT_TRUE(server->Restart().ok());
  for (const Result<KvReply>& r : RunMany(pipeline, 3)) EXPECT_TRUE(r.ok()) << r.status();
}

TEST(RedisPipelineTest, AStepWhoseCommandsDependOnItsRepliesIsRefused) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv redis(server->endpoint());
  RedisPipeline pipeline(redis);
  ASSERT_EQ(*pipeline.Execute(Argv{"SET", "k", "v"}), KvReply::Ok());
  // GET, and INCR only when the GET found something: queued while every reply is nil, this
  // step asks for one command, then for two once answered.
  Context ctx(pipeline);
  const auto step = [&]() -> Task<Result<KvReply>> {
    co_return co_await ctx.Step("GET then INCR", [&]() -> Result<KvReply> {
      const Argv get = {"GET", "k"};
      Result<KvReply> found = pipeline.Execute(get);
      if (!found.ok() || found->is_nil()) return found;
      const Argv incr = {"INCR", "n"};
      return pipeline.Execute(incr);
    });
  };
  Task<Result<KvReply>> t = step();
  t.Start();
  pipeline.Run();
  ASSERT_TRUE(t.done());
  ASSERT_FALSE(t.result().ok());
  EXPECT_TRUE(absl::IsInternal(t.result().status())) << t.result().status();
}

}  // namespace
}  // namespace ratelab
