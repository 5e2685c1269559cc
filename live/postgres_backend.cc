#include "absl/strings/numbers.h"
#include "impl/drivers/postgres_tables.h"
#include "impl/limiters/sql_protocols.h"
#include "impl/store/postgres_sql.h"
#include "live/server_stores.h"

namespace ratelab {

namespace {

// The harness's own statements about one table.
struct TableStatements {
  std::string expired_name, expired_text, usage_name, usage_text;
};

std::vector<TableStatements> StatementsFor(std::span<const SqlTable> tables) {
  std::vector<TableStatements> out;
  for (const SqlTable& t : tables) {
    const std::string bare(t.name.substr(t.name.find('.') + 1));
    out.push_back({"ratelab_expired_" + bare,
                   "SELECT key, expires_at FROM " + std::string(t.name) +
                       " WHERE expires_at < $1::bigint ORDER BY key, expires_at",
                   "ratelab_usage_" + bare,
                   "SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0) FROM " +
                       std::string(t.name) + " t"});
  }
  return out;
}

class PostgresBackend final : public SqlBackend {
 public:
  // On `store`, leased from `source`: a private server, or the running database.
  PostgresBackend(std::shared_ptr<ServerStoreSource> source, std::unique_ptr<StoreDriver> store)
      : source_(std::move(source)),
        store_(std::move(store)),
        owned_(store_->name().owns_server()),
        sql_(store_->address()),
        statements_(StatementsFor(SqlTables())) {}
  ~PostgresBackend() override {
    if (owned_) {
      sql_.Disconnect();
      source_->ReturnServer(std::move(store_));
    } else {
      // Leave ratelab's tables as they were found: empty.
      if (owns_tables_) (void)sql_.Run(TruncateRatelabTables());
      source_->ReturnUrl();
    }
  }

  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override {
    Result<SqlReply> r = sql_.Execute(statement, params);
    if (!r.ok()) Fail(r.status());
    return r;
  }

  // A bigint column of ratelab's own tables; a value that is not one (a table changed by someone
  // else) fails the run rather than being read as a number it is not.
  int64_t Bigint(const std::optional<std::string>& text) {
    int64_t n = 0;
    if (text && !absl::SimpleAtoi(*text, &n)) {
      Fail(absl::DataLossError("ratelab's tables at " + source_->where() +
                               " hold a value that is not a bigint: '" + *text + "'"));
    }
    return n;
  }

  void Restart() override {
    Fail(store_->Restart());
    if (owned_) sql_.Disconnect();  // the next statement connects to the new process
  }

  std::vector<SqlRow> RowsExpiredBefore(Instant t) override {
    std::vector<SqlRow> out;
    const std::vector<std::string> params = {std::to_string(ToUnixNanos(t))};
    for (size_t i = 0; i < statements_.size(); ++i) {
      const SqlStatement s{statements_[i].expired_name, statements_[i].expired_text};
      Result<SqlReply> r = Execute(s, params);
      if (!r.ok() || r->is_error()) continue;
      for (const SqlReply::Row& row : r->rows) {
        out.push_back({std::string(SqlTables()[i].name), row[0].value_or(""), Bigint(row[1])});
      }
    }
    return out;
  }

  StateSize Usage() override {
    StateSize size;
    for (const TableStatements& t : statements_) {
      Result<SqlReply> r = Execute(SqlStatement{t.usage_name, t.usage_text}, {});
      if (!r.ok() || r->is_error() || r->rows.size() != 1) continue;
      size.keys += Bigint(r->rows[0][0]);
      size.bytes += Bigint(r->rows[0][1]);
    }
    return size;
  }

  Status failure() const override { return failure_; }
  std::string Address() const override { return store_->address(); }

  // Makes ratelab's schema and tables if missing (UNLOGGED under durability none, on a private
  // server) and empties them; on an existing database, first checks that they hold nothing.
  Status Reset(Durability durability, bool check_empty) {
    const std::optional<Durability> logging = owned_ ? std::optional(durability) : std::nullopt;
    if (Status s = ReadyRatelabTables(sql_, Address(), logging, check_empty); !s.ok()) return s;
    owns_tables_ = true;
    if (check_empty) return absl::OkStatus();  // emptied once found empty
    if (Status s = sql_.Run(TruncateRatelabTables()); !s.ok()) {
      return Status(s.code(), "cannot empty ratelab's tables in PostgreSQL at " + Address() + ": " +
                                  std::string(s.message()));
    }
    return absl::OkStatus();
  }

 private:
  void Fail(const Status& s) {
    if (!s.ok() && failure_.ok()) failure_ = s;
  }

  std::shared_ptr<ServerStoreSource> source_;
  std::unique_ptr<StoreDriver> store_;
  const bool owned_;  // a private server, leased
  PostgresSql sql_;
  const std::vector<TableStatements> statements_;
  Status failure_;
  bool owns_tables_ = false;
};

}  // namespace

Result<std::unique_ptr<SqlBackend>> ServerStoreSource::OpenSql(Durability durability) {
  if (!sql()) return NoSqlStore();
  Result<std::unique_ptr<StoreDriver>> store = LeaseStore(durability);
  if (!store.ok()) return store.status();
  if (owns_server()) {
    auto backend = std::make_unique<PostgresBackend>(shared_from_this(), *std::move(store));
    if (Status s = backend->Reset(durability, false); !s.ok()) return s;
    return std::unique_ptr<SqlBackend>(std::move(backend));
  }
  const bool check_empty = LeaseUrl();
  auto backend = std::make_unique<PostgresBackend>(shared_from_this(), *std::move(store));
  if (Status s = backend->Reset(durability, check_empty); !s.ok()) return s;
  UrlCheckedEmpty();
  return std::unique_ptr<SqlBackend>(std::move(backend));
}

}  // namespace ratelab
