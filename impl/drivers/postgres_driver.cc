// PostgreSQL: a private server ratelab starts, or a running database by its URL, where the SQL
// protocols keep their state in ratelab's own schema (postgres_tables.h). Each thread has its own
// connection; overlapped, a pool of them, all opened before the first request.
#include "absl/strings/numbers.h"
#include "impl/drivers/postgres_tables.h"
#include "impl/drivers/store_drivers.h"
#include "impl/limiters/sql_protocols.h"
#include "impl/store/postgres_pool.h"
#include "impl/store/postgres_server.h"

namespace ratelab {

std::string TruncateRatelabTables() {
  std::string tables;
  for (const SqlTable& t : SqlTables()) {
    tables += (tables.empty() ? "" : ", ") + std::string(t.name);
  }
  return "TRUNCATE " + tables;
}

Status ReadyRatelabTables(PostgresSql& sql, std::string_view where,
                          std::optional<Durability> logging, bool require_empty) {
  const auto explain = [where](const Status& s) {
    return Status(s.code(), "cannot prepare ratelab's tables in PostgreSQL at " +
                                std::string(where) + ": " + std::string(s.message()));
  };
  if (Status s = sql.Run(SqlTablesDdl()); !s.ok()) return explain(s);
  if (logging) {
    std::string persistence;
    for (const SqlTable& t : SqlTables()) {
      persistence += "ALTER TABLE " + std::string(t.name) +
                     (*logging == Durability::kNone ? " SET UNLOGGED;" : " SET LOGGED;");
    }
    if (Status s = sql.Run(persistence); !s.ok()) return explain(s);
  }
  if (!require_empty) return absl::OkStatus();
  std::string count;
  for (const SqlTable& t : SqlTables()) {
    count += (count.empty() ? "SELECT " : " + ") +
             ("(SELECT count(*) FROM " + std::string(t.name) + ")");
  }
  Result<SqlReply> rows = sql.Execute(SqlStatement{"ratelab_rows_held", count}, {});
  if (!rows.ok()) return explain(rows.status());
  int64_t held = 0;
  if (rows->is_error() || rows->rows.size() != 1 || rows->rows[0].empty() || !rows->rows[0][0] ||
      !absl::SimpleAtoi(*rows->rows[0][0], &held)) {
    return explain(absl::DataLossError(rows->is_error() ? rows->error
                                                        : "the count of its rows was no number"));
  }
  if (held > 0) {
    return absl::FailedPreconditionError(
        "the PostgreSQL database at " + std::string(where) + " already holds " +
        std::to_string(held) + " rows in ratelab's tables (schema " + std::string(kSqlSchema) +
        "); ratelab empties them before and after each run, so it only uses them empty: empty "
        "them yourself, or give ratelab a database of its own");
  }
  if (Status s = sql.Run(TruncateRatelabTables()); !s.ok()) return explain(s);
  return absl::OkStatus();
}

namespace {

class PostgresDriver final : public ServerDriver<PostgresServer, PostgresServerOptions> {
 public:
  PostgresDriver(StoreName name, StoreStartOptions options)
      : ServerDriver(std::move(name), options) {}

  bool Serves(StoreKind kind) const override { return kind == StoreKind::kSql; }
  std::string Where() const override { return "in PostgreSQL at " + url_; }

  Status Prepare(bool require_empty) override {
    PostgresSql sql(url_);
    if (Status s = ReadyRatelabTables(sql, url_, std::nullopt, require_empty); !s.ok()) return s;
    emptied_ = emptied_ || require_empty;
    return absl::OkStatus();
  }

  Result<StoreConnection> Connect(const StoreConnectOptions& options) const override {
    PostgresOptions postgres;
    if (options.timeout > Duration(0)) {
      postgres.statement_timeout =
          std::chrono::duration_cast<std::chrono::milliseconds>(options.timeout);
    }
    StoreConnection c;
    if (options.overlapped) {
      auto pool = std::make_shared<PostgresPool>(url_, options.connections, postgres);
      // Connected before the first request, so that no decision pays for it.
      if (Status s = pool->Open(std::chrono::seconds(10)); !s.ok()) return s;
      c.sql = c.pool = pool.get();
      c.owner = std::move(pool);
      return c;
    }
    auto sql = std::make_shared<PostgresSql>(url_, postgres);
    c.sql = sql.get();
    c.owner = std::move(sql);
    return c;
  }

  void Empty() override {
    if (!emptied_) return;
    PostgresSql sql(url_);
    (void)sql.Run(TruncateRatelabTables());  // leave ratelab's tables as they were found: empty
  }

 private:
  PostgresServerOptions ServerOptions() const override {
    PostgresServerOptions options;
    options.durability = start_options().durability;
    return options;
  }

  bool emptied_ = false;  // required empty, so emptied after
};

}  // namespace

Result<std::unique_ptr<StoreDriver>> OpenPostgresDriver(const StoreName& name,
                                                        StoreStartOptions options) {
  if (!name.owns_server()) {
    if (Status s = ParsePostgresUrl(name.url); !s.ok()) return s;
  }
  return std::unique_ptr<StoreDriver>(std::make_unique<PostgresDriver>(name, options));
}

}  // namespace ratelab
