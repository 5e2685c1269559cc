// PostgresSql: the Sql store on a PostgreSQL server, through one libpqxx connection (not
// thread-safe: one per thread). It connects on first use and again after the connection is lost;
// each statement is prepared once per connection, by its name, and runs outside any transaction
// (autocommit). A statement that runs past the statement timeout is cancelled by the server and
// reads as DeadlineExceeded; a lost connection as Unavailable.
#ifndef RATELAB_IMPL_STORE_POSTGRES_SQL_H_
#define RATELAB_IMPL_STORE_POSTGRES_SQL_H_

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "impl/store/sql.h"

namespace ratelab {

struct PostgresOptions {
  std::chrono::milliseconds statement_timeout{5000};
  std::chrono::seconds connect_timeout{2};
};

class PostgresSql final : public Sql {
 public:
  // `conninfo`: a libpq connection string or a postgresql:// URL.
  explicit PostgresSql(std::string conninfo, PostgresOptions options = {});
  ~PostgresSql() override;
  PostgresSql(const PostgresSql&) = delete;
  PostgresSql& operator=(const PostgresSql&) = delete;

  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override;
  // Runs `sql` (any number of statements, no parameters) unprepared: the harness's own work
  // (schemas, emptying tables). An error of the SQL is an InternalError with the server's
  // message.
  Status Run(std::string_view sql);
  // Drops the connection; the next statement connects again.
  void Disconnect();

 private:
  Status Connect();

  std::string conninfo_;
  PostgresOptions options_;
  struct Connection;  // a pqxx::connection
  std::unique_ptr<Connection> conn_;
  std::set<std::string, std::less<>> prepared_;
};

// Checks that `url` is a PostgreSQL URL libpq accepts (postgresql:// or postgres://):
// InvalidArgument naming what is wrong.
Status ParsePostgresUrl(std::string_view url);
// How a statement's failure reads, for every client of PostgreSQL here: past the statement
// timeout (SQLSTATE 57014), DeadlineExceeded; the server or the connection gone (SQLSTATE class
// 08, 57P01..57P03, 53300, or `connection_open` false), Unavailable; anything else is the
// statement's own error, a normal answer with its SQLSTATE (XX000 when the server gave none).
Result<SqlReply> PostgresStatementFailed(std::string_view statement, std::string_view sqlstate,
                                         std::string message, bool connection_open);
// A libpq or server message without its trailing newlines and spaces.
std::string PostgresTrimmed(std::string message);
// `conninfo` (a libpq string or a URL) with connect_timeout set to `timeout` (at least 1 s).
std::string WithConnectTimeout(std::string conninfo, std::chrono::seconds timeout);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_POSTGRES_SQL_H_
