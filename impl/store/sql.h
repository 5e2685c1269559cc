// Sql: a relational store, spoken to one statement at a time. A statement is named and written
// once (SqlStatement, a constant of the protocol that runs it) and executed with its parameters
// bound, as text; each Execute is one autocommit statement: the one store operation of a
// protocol Step. Time reaches the store as a parameter, never as now(), so a simulation can
// drive a real server deterministically.
//
// Implementations: PostgresSql (PostgreSQL through libpqxx; impl/store/postgres_sql.h). SqlWrapper
// forwards every call, so a fault injector can override one.
#ifndef RATELAB_IMPL_STORE_SQL_H_
#define RATELAB_IMPL_STORE_SQL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

struct SqlStatement {
  std::string_view name;  // unique among the statements run on one store: it is prepared by it
  std::string_view text;  // with parameters $1, $2, ...
};

// What a statement answered: its rows (each column as text, or null), or the server's error. An
// error of the statement itself (a constraint it violated, a syntax error) is a normal answer.
struct SqlReply {
  using Row = std::vector<std::optional<std::string>>;
  std::vector<Row> rows;
  int64_t affected = 0;  // rows inserted, updated or deleted
  std::string sqlstate;  // the error's SQLSTATE ("23505": a unique violation); empty: no error
  std::string error;     // the server's message

  bool is_error() const { return !sqlstate.empty(); }
  bool unique_violation() const { return sqlstate == "23505"; }
};

class Sql {
 public:
  virtual ~Sql() = default;
  // Runs `statement` with `params` ($1 is params[0]). A non-OK Status means the store could not
  // be reached (Unavailable) or did not answer in time (DeadlineExceeded), and the statement may
  // or may not have taken effect.
  [[nodiscard]] virtual Result<SqlReply> Execute(const SqlStatement& statement,
                                                 std::span<const std::string> params) = 0;
};

class SqlWrapper : public Sql {
 public:
  explicit SqlWrapper(Sql& target) : target_(target) {}
  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override {
    return target_.Execute(statement, params);
  }

 private:
  Sql& target_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_SQL_H_
