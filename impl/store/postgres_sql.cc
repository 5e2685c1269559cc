#include "impl/store/postgres_sql.h"

#include <libpq-fe.h>

#include <pqxx/pqxx>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
// libpqxx 6.4 loses a libpq result when a statement meets a connection the server has dropped
// (its error path throws before taking ownership): a leak in the library, once per lost
// connection, that LeakSanitizer would otherwise make fatal in the sanitizer build.
extern "C" const char* __lsan_default_suppressions() { return "leak:libpqxx\n"; }
#endif
#endif

namespace ratelab {

namespace {

// SQLSTATE classes that mean the server, not the statement, failed: the connection is gone
// (08), the server is shutting down or crashed (57P01..57P03), or it cannot take more (53300).
bool ServerGone(std::string_view sqlstate) {
  return sqlstate.starts_with("08") || sqlstate.starts_with("57P") || sqlstate == "53300";
}

constexpr std::string_view kQueryCanceled = "57014";

}  // namespace

std::string PostgresTrimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  return message;
}

Result<SqlReply> PostgresStatementFailed(std::string_view statement, std::string_view sqlstate,
                                         std::string message, bool connection_open) {
  if (sqlstate == kQueryCanceled) {
    return absl::DeadlineExceededError("statement " + std::string(statement) +
                                       " ran past the statement timeout");
  }
  if (ServerGone(sqlstate) || !connection_open) {
    return absl::UnavailableError("PostgreSQL failed: " + PostgresTrimmed(std::move(message)));
  }
  SqlReply reply;
  reply.sqlstate = sqlstate.empty() ? "XX000" : std::string(sqlstate);
  reply.error = PostgresTrimmed(std::move(message));
  return reply;
}

Status ParsePostgresUrl(std::string_view url) {
  if (!url.starts_with("postgresql://") && !url.starts_with("postgres://")) {
    return absl::InvalidArgumentError("'" + std::string(url) +
                                      "' is not a PostgreSQL URL (postgresql://...)");
  }
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(url).c_str(), &error);
  if (options == nullptr) {
    const std::string why = PostgresTrimmed(error != nullptr ? error : "libpq cannot read it");
    PQfreemem(error);
    return absl::InvalidArgumentError("'" + std::string(url) + "' is not a PostgreSQL URL: " + why);
  }
  PQconninfoFree(options);
  return absl::OkStatus();
}

std::string WithConnectTimeout(std::string conninfo, std::chrono::seconds timeout) {
  // A parameter of its own: a URL takes it after '?', a key=value string after a space.
  const std::string param =
      "connect_timeout=" + std::to_string(std::max<int64_t>(1, timeout.count()));
  if (conninfo.find("://") != std::string::npos) {
    conninfo += (conninfo.find('?') == std::string::npos ? "?" : "&") + param;
  } else {
    conninfo += " " + param;
  }
  return conninfo;
}

struct PostgresSql::Connection {
  explicit Connection(const std::string& info) : c(info) {}
  pqxx::connection c;
};

PostgresSql::PostgresSql(std::string conninfo, PostgresOptions options)
    : conninfo_(std::move(conninfo)), options_(options) {}

PostgresSql::~PostgresSql() = default;

void PostgresSql::Disconnect() {
  conn_.reset();
  prepared_.clear();
}

Status PostgresSql::Connect() {
  const std::string info = WithConnectTimeout(conninfo_, options_.connect_timeout);
  try {
    conn_ = std::make_unique<Connection>(info);
    pqxx::nontransaction tx(conn_->c);
    tx.exec("SET statement_timeout = " + std::to_string(options_.statement_timeout.count()));
  } catch (const std::exception& e) {
    conn_.reset();
    return absl::UnavailableError("cannot connect to PostgreSQL: " + PostgresTrimmed(e.what()));
  }
  return absl::OkStatus();
}

Result<SqlReply> PostgresSql::Execute(const SqlStatement& statement,
                                      std::span<const std::string> params) {
  if (conn_ == nullptr) {
    if (Status s = Connect(); !s.ok()) return s;
  }
  const std::string name(statement.name);
  try {
    if (!prepared_.contains(name)) {
      conn_->c.prepare(name, std::string(statement.text));
      prepared_.insert(name);
    }
    pqxx::nontransaction tx(conn_->c);
    const pqxx::result r =
        tx.exec_prepared(name, pqxx::prepare::make_dynamic_params(params.begin(), params.end()));
    SqlReply reply;
    reply.affected = r.affected_rows();
    for (const pqxx::row& row : r) {
      SqlReply::Row out;
      for (const pqxx::field& f : row) {
        out.push_back(f.is_null() ? std::nullopt : std::optional<std::string>(f.c_str()));
      }
      reply.rows.push_back(std::move(out));
    }
    return reply;
  } catch (const pqxx::broken_connection& e) {
    Disconnect();
    return absl::UnavailableError(std::string("PostgreSQL connection lost: ") + e.what());
  } catch (const pqxx::in_doubt_error& e) {
    Disconnect();
    return absl::UnavailableError(std::string("PostgreSQL connection lost: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    Result<SqlReply> failed = PostgresStatementFailed(name, e.sqlstate(), e.what(),
                                                      conn_ != nullptr && conn_->c.is_open());
    if (absl::IsUnavailable(failed.status())) Disconnect();
    return failed;
  } catch (const std::exception& e) {
    Disconnect();
    return absl::UnavailableError(std::string("PostgreSQL failed: ") + e.what());
  }
}

Status PostgresSql::Run(std::string_view sql) {
  if (conn_ == nullptr) {
    if (Status s = Connect(); !s.ok()) return s;
  }
  try {
    pqxx::nontransaction tx(conn_->c);
    tx.exec(std::string(sql));
    return absl::OkStatus();
  } catch (const pqxx::broken_connection& e) {
    Disconnect();
    return absl::UnavailableError(std::string("PostgreSQL connection lost: ") + e.what());
  } catch (const std::exception& e) {
    return absl::InternalError(PostgresTrimmed(e.what()));
  }
}

}  // namespace ratelab
