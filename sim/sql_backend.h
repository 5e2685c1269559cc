// Where a simulated run keeps the SQL protocols' state: a PostgreSQL database, opened from the
// run's store source (sim/kv_backend.h: `--store postgres` starts a private server, a
// postgresql:// URL names an existing database). Time reaches the server only as the
// statements' parameters, so the same seed makes the same history on every run; a private
// server is restarted by kill -9 (impl/store/postgres_server.h says what each durability keeps).
//
// The tables are the SQL protocols' (impl/limiters/sql_protocols.h: SqlTables), in the schema
// `ratelab`, created once per database and emptied (TRUNCATE) before each run; with durability
// none they are UNLOGGED, so a restart loses every row. In an existing database, ratelab touches
// nothing outside that schema, and refuses to start when its tables hold rows it did not write.
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
