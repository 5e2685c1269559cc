#include "testing/postgres.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "impl/store/postgres_server.h"
#include "impl/store/postgres_sql.h"
#include "impl/store/server_process.h"
#include "testing/files.h"

namespace ratelab {
namespace {

constexpr SqlStatement kInsert{"test_insert", "INSERT INTO t (k, v) VALUES ($1, $2) RETURNING v"};
constexpr SqlStatement kCount{"test_count", "SELECT count(*) FROM t"};
constexpr SqlStatement kSleep{"test_sleep", "SELECT pg_sleep($1)"};

int64_t Count(PostgresSql& sql) {
  Result<SqlReply> r = sql.Execute(kCount, {});
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok() || r->rows.size() != 1 || !r->rows[0][0]) return -1;
  return std::stoll(*r->rows[0][0]);
}

void Insert(PostgresSql& sql, int from, int to) {
  for (int i = from; i < to; ++i) {
    const std::vector<std::string> params = {"k" + std::to_string(i), std::to_string(i)};
    Result<SqlReply> r = sql.Execute(kInsert, params);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_FALSE(r->is_error()) << r->error;
  }
}

TEST(PostgresTest, StatementsRunPreparedWithTheirParametersAndErrorsAreAnswers) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresSql sql(server->conninfo());
  ASSERT_TRUE(sql.Run("CREATE TABLE t (k text PRIMARY KEY, v bigint NOT NULL)").ok());
  const std::vector<std::string> params = {"a'; DROP TABLE t; --", "7"};
  Result<SqlReply> r = sql.Execute(kInsert, params);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0][0], "7");
  EXPECT_EQ(r->affected, 1);
  // The same key again: a unique violation is the statement's answer, not a failure.
  r = sql.Execute(kInsert, params);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->unique_violation()) << r->sqlstate << " " << r->error;
  EXPECT_EQ(Count(sql), 1);
  // A parameter of the wrong type is the statement's error too.
  r = sql.Execute(kInsert, std::vector<std::string>{"b", "seven"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->sqlstate, "22P02") << r->error;
  // The URL form reaches the same database.
  PostgresSql by_url(server->url());
  EXPECT_EQ(Count(by_url), 1);
}

TEST(PostgresTest, AStatementPastTheTimeoutIsDeadlineExceeded) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresOptions options;
  options.statement_timeout = std::chrono::milliseconds(50);
  PostgresSql sql(server->conninfo(), options);
  Result<SqlReply> r = sql.Execute(kSleep, std::vector<std::string>{"5"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  r = sql.Execute(kSleep, std::vector<std::string>{"0"});
  EXPECT_TRUE(r.ok()) << r.status();  // the connection is still good
}

TEST(PostgresTest, AKilledServerIsUnavailableAndAfterARestartStatementsRunAgain) {
  PostgresServerOptions options;
  options.durability = Durability::kAlways;
  RATELAB_START_POSTGRES(server, options);
  PostgresSql sql(server->conninfo());
  ASSERT_TRUE(sql.Run("CREATE TABLE t (k text PRIMARY KEY, v bigint NOT NULL)").ok());
  Insert(sql, 0, 50);
  ASSERT_TRUE(server->Kill().ok());
  // A backend is a session of its own, outside the postmaster's group, and it answers until it
  // sees its postmaster gone (at once when idle; not within our kill): a statement fails soon.
  Result<SqlReply> r = sql.Execute(kCount, {});
  for (int i = 0; i < 200 && r.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    r = sql.Execute(kCount, {});
  }
  ASSERT_FALSE(r.ok()) << "the killed server still answers after 2 s";
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  ASSERT_TRUE(server->Launch().ok());
  // The first statement found the connection gone; the next connects again.
  // synchronous_commit on: every answered commit survives the kill.
  EXPECT_EQ(Count(sql), 50);
  Insert(sql, 50, 60);
  ASSERT_TRUE(server->Restart().ok());
  sql.Disconnect();  // the server's end of the connection is gone
  EXPECT_EQ(Count(sql), 60);
}

TEST(PostgresTest, DurabilityNoneLosesUnloggedTablesAtARestartAndEverysecKeepsWhatWasWritten) {
  PostgresServerOptions options;
  options.durability = Durability::kNone;
  RATELAB_START_POSTGRES(none, options);
  PostgresSql sql(none->conninfo());
  ASSERT_TRUE(sql.Run("CREATE UNLOGGED TABLE t (k text PRIMARY KEY, v bigint NOT NULL)").ok());
  Insert(sql, 0, 20);
  ASSERT_TRUE(none->Restart().ok());
  sql.Disconnect();
  EXPECT_EQ(Count(sql), 0);  // crash recovery empties an unlogged table

  options.durability = Durability::kEverySec;
  RATELAB_START_POSTGRES(everysec, options);
  PostgresSql late(everysec->conninfo());
  ASSERT_TRUE(late.Run("CREATE TABLE t (k text PRIMARY KEY, v bigint NOT NULL)").ok());
  Insert(late, 0, 20);
  // The WAL writer writes what synchronous_commit off held back within 3 x 200 ms: after that
  // a kill loses nothing.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(everysec->Restart().ok());
  late.Disconnect();
  EXPECT_EQ(Count(late), 20);
}

TEST(PostgresTest, StopAndTheDestructorLeaveNoProcessOrDirBehind) {
  std::string dir;
  pid_t pid = -1;
  {
    RATELAB_START_POSTGRES(server, PostgresServerOptions{});
    dir = server->dir();
    std::ifstream owner(dir + "/owner");
    pid_t me = 0;
    owner >> me >> pid;
    EXPECT_EQ(me, getpid());
    ASSERT_TRUE(ProcessAlive(pid));
    ASSERT_TRUE(server->Stop().ok());
    EXPECT_FALSE(ProcessAlive(pid));
    ASSERT_TRUE(server->Launch().ok());
    std::ifstream again(dir + "/owner");
    again >> me >> pid;
  }
  EXPECT_FALSE(ProcessAlive(pid));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(PostgresTest, TheNextStartCleansUpAfterAProcessKilledOutright) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  std::ifstream owner(server->dir() + "/owner");
  pid_t me = 0, postmaster = 0;
  owner >> me >> postmaster;
  const pid_t gone = fork();  // a pid whose process has exited: the owner that was killed
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  testing_files::Write(server->dir(), "owner",
                       std::to_string(gone) + " " + std::to_string(postmaster));
  const std::filesystem::path dir = server->dir();
  // What other killed owners left goes too. Tests run side by side, and every start of a private
  // server removes what killed owners left: another test's start may get there first, and
  // finish a moment later.
  RemoveAbandonedServers(TempRoot(), "ratelab-pg-", "postgres");
  for (int i = 0; i < 200 && std::filesystem::exists(dir); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  // The postmaster was this process's child: reap it, killed.
  int status = 0;
  ASSERT_EQ(waitpid(postmaster, &status, 0), postmaster);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(PostgresTest, UrlsAreCheckedBeforeUse) {
  EXPECT_TRUE(ParsePostgresUrl("postgresql://ratelab@/postgres?host=/tmp/x").ok());
  EXPECT_TRUE(ParsePostgresUrl("postgres://u:p@127.0.0.1:5432/db").ok());
  const Status bad = ParsePostgresUrl("postgresql://h/db?bogus=1");
  EXPECT_TRUE(absl::IsInvalidArgument(bad));
  EXPECT_NE(bad.message().find("bogus"), std::string::npos) << bad;
  EXPECT_FALSE(ParsePostgresUrl("redis://x").ok());
}

}  // namespace
}  // namespace ratelab
