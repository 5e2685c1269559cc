// One run's SQL store, as the harness sees it: the SQL protocols' Sql, and what the checks and
// faults need besides. Only on PostgreSQL, which has no embedded stand-in: the live layer opens
// it (live/server_stores.h), a private server or an existing database. Time reaches the server
// only as the statements' parameters, so the same seed makes the same history on every run.
#ifndef RATELAB_SIM_SQL_BACKEND_H_
#define RATELAB_SIM_SQL_BACKEND_H_

#include <string>
#include <vector>

#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/store/sql.h"
#include "model/time.h"

namespace ratelab {

// A row a run left behind: its table, its key and when it stopped mattering.
struct SqlRow {
  std::string table;
  std::string key;
  int64_t expires_at = 0;  // unix nanoseconds
};

// One run's SQL store. Execute is the protocols' way in; the rest is the harness's.
class SqlBackend : public Sql {
 public:
  // A store restart (kill -9 and start again).
  virtual void Restart() = 0;
  // Rows whose expires_at is before `t`, by table and key.
  virtual std::vector<SqlRow> RowsExpiredBefore(Instant t) = 0;
  // Rows and their bytes (pg_column_size).
  virtual StateSize Usage() = 0;
  // The first failure of the store itself (a server that died, a lost connection, a timeout),
  // which makes the run's history worthless: OK if none.
  virtual Status failure() const = 0;
  // How other connections reach the same database (a libpq connection string or URL), for
  // threads that each need their own (stress).
  virtual std::string Address() const = 0;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_SQL_BACKEND_H_
