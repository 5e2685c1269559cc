// ratelab's tables in a PostgreSQL database (impl/limiters/sql_protocols.h: SqlTables), readied
// and emptied the same way by every runtime: the live ones' driver (postgres_driver.cc) and the
// simulator's store on a real server (live/postgres_backend.cc).
#ifndef RATELAB_IMPL_DRIVERS_POSTGRES_TABLES_H_
#define RATELAB_IMPL_DRIVERS_POSTGRES_TABLES_H_

#include <optional>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/postgres_sql.h"

namespace ratelab {

// Makes ratelab's schema and tables where missing, on `sql` (the database at `where`, as a
// message names it); with `logging`, sets them LOGGED, or UNLOGGED under durability none (a
// private server's: a restart then loses every row). With `require_empty`, refuses a database
// whose tables hold a row (FailedPrecondition saying how to give an empty one) and empties them.
Status ReadyRatelabTables(PostgresSql& sql, std::string_view where,
                          std::optional<Durability> logging, bool require_empty);

// The statement that empties every table of ratelab's.
std::string TruncateRatelabTables();

}  // namespace ratelab

#endif  // RATELAB_IMPL_DRIVERS_POSTGRES_TABLES_H_
