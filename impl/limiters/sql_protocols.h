// The protocols on a relational store (Sql): each decision one or more autocommit statements,
// each a Step, written as a developer would write them for PostgreSQL. Time is a parameter
// (unix nanoseconds as bigint), never now(), and every table keeps each row's `expires_at`
// (unix nanoseconds on the clock of the client that wrote it): the instant past which the row no
// longer changes any decision. A correct protocol deletes expired rows as it goes (one DELETE
// ... FOR UPDATE SKIP LOCKED inside its statement, so concurrent requests never wait on each
// other's sweep), and the key-expiry check holds SQL rows to that as it holds Redis keys to TTLs.
//
//   sql-fixed-window-upsert          one INSERT ... ON CONFLICT DO UPDATE ... WHERE count + cost
//                                    <= limit: correct per window; 2N across an edge
//   sql-fixed-window-select-update   SELECT count, then INSERT or UPDATE in a second statement:
//                                    concurrent requests both see room (races)
//   sql-token-bucket                 one INSERT ... ON CONFLICT DO UPDATE computing the refill in
//                                    exact integer nanoseconds: correct
#ifndef RATELAB_IMPL_LIMITERS_SQL_PROTOCOLS_H_
#define RATELAB_IMPL_LIMITERS_SQL_PROTOCOLS_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "impl/limiters/protocol.h"

namespace ratelab {

// A table the SQL protocols keep their state in (in the schema `ratelab`): its qualified name and
// the statements that create it. Every one has the columns `key` (text) and `expires_at`
// (bigint).
struct SqlTable {
  std::string_view name;
  std::string_view create;
};
std::span<const SqlTable> SqlTables();
// The schema every SQL protocol's table is in.
inline constexpr std::string_view kSqlSchema = "ratelab";
// The statements that make the schema and every table, where missing.
std::string SqlTablesDdl();

std::unique_ptr<Protocol> MakeSqlFixedWindowUpsert(const Policy& policy, const Stores& stores);
std::unique_ptr<Protocol> MakeSqlFixedWindowSelectUpdate(const Policy& policy,
                                                         const Stores& stores);
std::unique_ptr<Protocol> MakeSqlTokenBucket(const Policy& policy, const Stores& stores);
// What sql-token-bucket needs beyond a token bucket: a full bucket (burst x interval, in
// nanoseconds) that bigint arithmetic holds with room for the refill.
Status CheckSqlTokenBucket(const Policy& policy);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_SQL_PROTOCOLS_H_
