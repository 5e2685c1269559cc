// PostgresPool against a real PostgreSQL server: the steps of many coroutines run on several
// connections from one thread, each answered with its own statement's answer.
#include "impl/store/postgres_pool.h"

#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "impl/core/task.h"
#include "impl/store/postgres_server.h"
#include "testing/postgres.h"

namespace ratelab {
namespace {

using Params = std::vector<std::string>;

constexpr SqlStatement kPoolDouble{"pool_double", "SELECT pg_backend_pid(), $1::bigint * 2"};
constexpr SqlStatement kPoolInsert{"pool_insert", "INSERT INTO t (k) VALUES ($1) RETURNING k"};
constexpr SqlStatement kPoolSleep{"pool_sleep", "SELECT pg_sleep($1)"};

// One step: `statement` with `params`.
Task<Result<SqlReply>> Ask(Context& ctx, Sql& sql, const SqlStatement& statement, Params params) {
  co_return co_await ctx.Step(std::string(statement.name),
                              [&] { return sql.Execute(statement, params); });
}

// Two steps: kPoolDouble of `n`, then kPoolDouble of what it answered; the second answer.
Task<Result<SqlReply>> DoubleTwice(Context& ctx, Sql& sql, int n) {
  // (Named, not braced in the co_await: GCC 12 miscompiles an initializer list there.)
  Params params = {std::to_string(n)};
  Result<SqlReply> first = co_await Ask(ctx, sql, kPoolDouble, std::move(params));
  if (!first.ok() || first->rows.size() != 1 || !first->rows[0][1]) co_return first;
  Params again = {*first->rows[0][1]};
  co_return co_await Ask(ctx, sql, kPoolDouble, std::move(again));
}

// Starts every task, runs the pool, and gives each task's result.
std::vector<Result<SqlReply>> RunAll(PostgresPool& pool, std::deque<Context>& contexts,
                                     std::vector<Task<Result<SqlReply>>>& tasks) {
  for (Task<Result<SqlReply>>& t : tasks) t.Start();
  pool.Run();
  EXPECT_EQ(pool.in_flight(), 0u);
  EXPECT_EQ(pool.waiting(), 0u);
  std::vector<Result<SqlReply>> out;
  for (Task<Result<SqlReply>>& t : tasks) {
    EXPECT_TRUE(t.done());
    out.push_back(t.done() ? t.result() : absl::InternalError("not done"));
  }
  contexts.clear();
  return out;
}

// `n` one-step tasks of `statement` with `params`, run by `pool`.
std::vector<Result<SqlReply>> AskMany(PostgresPool& pool, int n, const SqlStatement& statement,
                                      const Params& params) {
  std::deque<Context> contexts;
  std::vector<Task<Result<SqlReply>>> tasks;
  for (int i = 0; i < n; ++i) {
    contexts.emplace_back(pool);
    tasks.push_back(Ask(contexts.back(), pool, statement, params));
  }
  return RunAll(pool, contexts, tasks);
}

TEST(PostgresPoolTest, StepsRunOnEveryConnectionAndEachGetsItsOwnAnswer) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresPool pool(server->conninfo(), 4);
  std::deque<Context> contexts;
  std::vector<Task<Result<SqlReply>>> tasks;
  for (int i = 0; i < 12; ++i) {
    contexts.emplace_back(pool);
    tasks.push_back(DoubleTwice(contexts.back(), pool, i));
  }
  const std::vector<Result<SqlReply>> results = RunAll(pool, contexts, tasks);
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    ASSERT_EQ(results[i]->rows.size(), 1u);
    EXPECT_EQ(results[i]->rows[0][1], std::to_string(4 * i)) << "task " << i;
  }
  // The first four of eight steps waiting go out at once, one on each connection.
  std::set<std::string> backends;
  for (const Result<SqlReply>& r : AskMany(pool, 8, kPoolDouble, Params{"1"})) {
    ASSERT_TRUE(r.ok()) << r.status();
    backends.insert(r->rows[0][0].value_or(""));
  }
  EXPECT_EQ(backends.size(), 4u);
  // Outside a run, a statement runs at once.
  Result<SqlReply> direct = pool.Execute(kPoolDouble, Params{"21"});
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->rows[0][1], "42");
}

TEST(PostgresPoolTest, AStatementsErrorIsItsAnswerAndTheTimeoutIsDeadlineExceeded) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresOptions options;
  // Long enough for an insert on a machine busy with the rest of the suite (50ms was not, once),
  // short beside the 5s sleep it cuts.
  options.statement_timeout = std::chrono::milliseconds(500);
  // The table made under the default timeout: a CREATE TABLE on a busy machine can take longer
  // than the timeout this test puts on the statements it judges.
  {
    PostgresPool setup(server->conninfo(), 1, PostgresOptions{});
    const Result<SqlReply> ddl =
        setup.Execute({"pool_ddl", "CREATE TABLE t (k text PRIMARY KEY)"}, {});
    ASSERT_TRUE(ddl.ok()) << ddl.status();
  }
  PostgresPool pool(server->conninfo(), 2, options);
  // Three inserts of one key: one row, and two unique violations as answers.
  int inserted = 0;
  for (const Result<SqlReply>& r : AskMany(pool, 3, kPoolInsert, Params{"a"})) {
    ASSERT_TRUE(r.ok()) << r.status();
    if (r->is_error()) {
      EXPECT_TRUE(r->unique_violation()) << r->sqlstate << " " << r->error;
    } else {
      ++inserted;
    }
  }
  EXPECT_EQ(inserted, 1);
  // A parameter of the wrong type: the statement's error; a statement that cannot be prepared:
  // its error too.
  Result<SqlReply> r = pool.Execute(kPoolDouble, Params{"two"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sqlstate, "22P02") << r->error;
  r = pool.Execute({"pool_bad", "SELECT FROM nowhere"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sqlstate, "42P01") << r->error;
  // Past the statement timeout, every step fails alone and its connection goes on.
  for (const Result<SqlReply>& slow : AskMany(pool, 2, kPoolSleep, Params{"5"})) {
    ASSERT_FALSE(slow.ok());
    EXPECT_TRUE(absl::IsDeadlineExceeded(slow.status())) << slow.status();
  }
  for (const Result<SqlReply>& fast : AskMany(pool, 2, kPoolSleep, Params{"0"})) {
    EXPECT_TRUE(fast.ok()) << fast.status();
  }
}

// A server that stops answering (SIGSTOP: its connections stay open, and new ones are taken in
// by the kernel and never answered): every call, connecting included, ends at its timeout.
TEST(PostgresPoolTest, AStalledServerFailsEveryCallWithinTheStatementTimeout) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresOptions options;
  options.statement_timeout = std::chrono::milliseconds(200);
  PostgresPool pool(server->conninfo(), 2, options);
  for (const Result<SqlReply>& r : AskMany(pool, 2, kPoolDouble, Params{"1"})) {
    ASSERT_TRUE(r.ok()) << r.status();  // both connections open
  }
  ASSERT_TRUE(server->Pause().ok());
  const auto timed = [&](auto call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::steady_clock::now() - start;
  };
  // Statements on open connections, then on new ones (their connect is never answered).
  for (int round = 0; round < 3; ++round) {
    std::vector<Result<SqlReply>> answers;
    const auto took = timed([&] { answers = AskMany(pool, 4, kPoolDouble, Params{"1"}); });
    EXPECT_LT(took, std::chrono::milliseconds(450)) << "round " << round;
    for (const Result<SqlReply>& r : answers) {
      EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
    }
  }
  const auto direct = timed([&] {
    EXPECT_TRUE(absl::IsDeadlineExceeded(pool.Execute(kPoolDouble, Params{"1"}).status()));
  });
  EXPECT_LT(direct, std::chrono::milliseconds(450));
  ASSERT_TRUE(server->Resume().ok());
  // The resumed server first works off the connections the stalled rounds left it (under a
  // sanitizer and a busy machine, longer than the pool's 200 ms): a patient client waits for
  // that. Then the pool's own calls connect again within their timeout.
  PostgresOptions patient;
  patient.statement_timeout = std::chrono::seconds(30);
  PostgresPool caught_up(server->conninfo(), 1, patient);
  ASSERT_TRUE(caught_up.Execute(kPoolDouble, Params{"1"}).ok());
  for (const Result<SqlReply>& r : AskMany(pool, 2, kPoolDouble, Params{"1"})) {
    EXPECT_TRUE(r.ok()) << r.status();
  }
}

TEST(PostgresPoolTest, AKilledServerFailsTheStepsInFlightAndTheNextRunConnectsAgain) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresPool pool(server->conninfo(), 3);
  for (const Result<SqlReply>& r : AskMany(pool, 3, kPoolDouble, Params{"1"})) {
    ASSERT_TRUE(r.ok()) << r.status();
  }
  ASSERT_TRUE(server->Kill().ok());
  // A backend answers until it sees its postmaster gone (PostgresTest says why): soon, every
  // step of a run fails.
  std::vector<Result<SqlReply>> results = AskMany(pool, 3, kPoolDouble, Params{"1"});
  const auto any_ok = [&] {
    return std::any_of(results.begin(), results.end(), [](const auto& r) { return r.ok(); });
  };
  for (int i = 0; i < 200 && any_ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    results = AskMany(pool, 3, kPoolDouble, Params{"1"});
  }
  for (const Result<SqlReply>& r : results) {
    ASSERT_FALSE(r.ok()) << "the killed server still answers after 2 s";
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  }
  ASSERT_TRUE(server->Launch().ok());
  for (const Result<SqlReply>& r : AskMany(pool, 3, kPoolDouble, Params{"1"})) {
    EXPECT_TRUE(r.ok()) << r.status();
  }
}

// A run tries the pool's open connections before its closed ones: while the server is down, a
// connection the server dropped fails its step and is closed, so once the server is back, every
// step of the next run connects again rather than meeting a stale connection.
TEST(PostgresPoolTest, WhileTheServerIsDownEveryStaleConnectionIsTriedAndClosed) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresPool pool(server->conninfo(), 2);
  for (const Result<SqlReply>& r : AskMany(pool, 2, kPoolDouble, Params{"1"})) {
    ASSERT_TRUE(r.ok()) << r.status();
  }
  // A restart leaves both connections stale; one step finds its own so, and closes it.
  ASSERT_TRUE(server->Restart().ok());
  const std::vector<Result<SqlReply>> one = AskMany(pool, 1, kPoolDouble, Params{"1"});
  ASSERT_FALSE(one[0].ok());
  EXPECT_TRUE(absl::IsUnavailable(one[0].status())) << one[0].status();
  // Down: one connection closed, one stale. Both steps fail, and the stale one is closed too.
  ASSERT_TRUE(server->Kill().ok());
  for (const Result<SqlReply>& r : AskMany(pool, 2, kPoolDouble, Params{"1"})) {
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  }
  ASSERT_TRUE(server->Launch().ok());
  for (const Result<SqlReply>& r : AskMany(pool, 2, kPoolDouble, Params{"1"})) {
    EXPECT_TRUE(r.ok()) << r.status();
  }
}

// Two statements in one step: the second is refused, and the step's answer says why.
Task<Result<SqlReply>> AskTwiceInOneStep(Context& ctx, Sql& sql) {
  co_return co_await ctx.Step("twice", [&] {
    Result<SqlReply> first = sql.Execute(kPoolDouble, Params{"1"});
    if (!first.ok()) return first;
    return sql.Execute(kPoolDouble, Params{"2"});
  });
}

TEST(PostgresPoolTest, AStepOfTwoStatementsIsAnsweredInternal) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresPool pool(server->conninfo(), 1);
  std::deque<Context> contexts;
  std::vector<Task<Result<SqlReply>>> tasks;
  contexts.emplace_back(pool);
  tasks.push_back(AskTwiceInOneStep(contexts.back(), pool));
  contexts.emplace_back(pool);
  tasks.push_back(Ask(contexts.back(), pool, kPoolDouble, Params{"3"}));
  const std::vector<Result<SqlReply>> results = RunAll(pool, contexts, tasks);
  ASSERT_FALSE(results[0].ok());
  EXPECT_TRUE(absl::IsInternal(results[0].status())) << results[0].status();
  EXPECT_NE(results[0].status().message().find("second statement"), std::string::npos);
  // The connection it used answers the next step.
  ASSERT_TRUE(results[1].ok()) << results[1].status();
  EXPECT_EQ(results[1]->rows[0][1], "6");
}

}  // namespace
}  // namespace ratelab
