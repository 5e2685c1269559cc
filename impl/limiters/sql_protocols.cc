#include "impl/limiters/sql_protocols.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "impl/limiters/kv_steps.h"
#include "impl/store/sql.h"

namespace ratelab {

namespace {

constexpr std::array<SqlTable, 2> kTables = {{
    {"ratelab.fixed_window", R"sql(
CREATE TABLE IF NOT EXISTS ratelab.fixed_window (
  key text NOT NULL,
  window_start bigint NOT NULL,
  count bigint NOT NULL CHECK (count > 0),
  expires_at bigint NOT NULL,
  PRIMARY KEY (key, window_start));
CREATE INDEX IF NOT EXISTS fixed_window_expires_at ON ratelab.fixed_window (expires_at);
)sql"},
    {"ratelab.token_bucket", R"sql(
CREATE TABLE IF NOT EXISTS ratelab.token_bucket (
  key text PRIMARY KEY,
  level bigint NOT NULL,
  last bigint NOT NULL,
  allowed boolean NOT NULL,
  expires_at bigint NOT NULL);
CREATE INDEX IF NOT EXISTS token_bucket_expires_at ON ratelab.token_bucket (expires_at);
)sql"},
}};

// $1 key, $2 window_start, $3 cost, $4 limit, $5 expires_at, $6 now. Answers one row: the count
// after an admission (null when denied), and the count the statement's snapshot saw.
constexpr SqlStatement kUpsert{"sql_fixed_window_upsert", R"sql(
WITH swept AS (
  DELETE FROM ratelab.fixed_window WHERE ctid IN (
    SELECT ctid FROM ratelab.fixed_window WHERE expires_at < $6::bigint
    FOR UPDATE SKIP LOCKED)),
admitted AS (
  INSERT INTO ratelab.fixed_window AS w (key, window_start, count, expires_at)
  SELECT $1::text, $2::bigint, $3::bigint, $5::bigint WHERE $3::bigint <= $4::bigint
  ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + EXCLUDED.count
    WHERE w.count + EXCLUDED.count <= $4::bigint
  RETURNING count)
SELECT (SELECT count FROM admitted),
       (SELECT count FROM ratelab.fixed_window WHERE key = $1::text AND window_start = $2::bigint)
)sql"};

// The select-update protocol's three statements. $1 key, $2 window_start.
constexpr SqlStatement kSelectCount{
    "sql_fixed_window_select",
    "SELECT count FROM ratelab.fixed_window WHERE key = $1::text AND window_start = $2::bigint"};
// $3 cost, $4 expires_at, $5 now.
constexpr SqlStatement kInsertCount{"sql_fixed_window_insert", R"sql(
WITH swept AS (
  DELETE FROM ratelab.fixed_window WHERE ctid IN (
    SELECT ctid FROM ratelab.fixed_window WHERE expires_at < $5::bigint
    FOR UPDATE SKIP LOCKED))
INSERT INTO ratelab.fixed_window (key, window_start, count, expires_at)
VALUES ($1::text, $2::bigint, $3::bigint, $4::bigint) RETURNING count
)sql"};
// $3 cost.
constexpr SqlStatement kUpdateCount{"sql_fixed_window_update", R"sql(
UPDATE ratelab.fixed_window SET count = count + $3::bigint
WHERE key = $1::text AND window_start = $2::bigint RETURNING count
)sql"};

// $1 key, $2 now, $3 need (cost x interval), $4 full (burst x interval), $5 pad. The level is in
// nanoseconds of refill (tokens x interval): it grows by one each nanosecond up to full. A
// denial stores the refilled level too, which decides every later request as not storing it
// would. Answers the level and last after the decision, and whether it admitted; no row when the
// key is new and the cost is above the burst.
constexpr SqlStatement kBucket{"sql_token_bucket", R"sql(
WITH swept AS (
  DELETE FROM ratelab.token_bucket WHERE ctid IN (
    SELECT ctid FROM ratelab.token_bucket WHERE expires_at < $2::bigint AND key <> $1::text
    FOR UPDATE SKIP LOCKED))
INSERT INTO ratelab.token_bucket AS b (key, level, last, allowed, expires_at)
SELECT $1::text, $4::bigint - $3::bigint, $2::bigint, true, $2::bigint + $3::bigint + $5::bigint
WHERE $3::bigint <= $4::bigint
ON CONFLICT (key) DO UPDATE SET
  allowed = LEAST($4::bigint, b.level + GREATEST($2::bigint, b.last) - b.last) >= $3::bigint,
  level = LEAST($4::bigint, b.level + GREATEST($2::bigint, b.last) - b.last)
          - CASE WHEN LEAST($4::bigint, b.level + GREATEST($2::bigint, b.last) - b.last)
                      >= $3::bigint THEN $3::bigint ELSE 0 END,
  last = GREATEST($2::bigint, b.last),
  expires_at = GREATEST($2::bigint, b.last) + $4::bigint + $5::bigint
               - LEAST($4::bigint, b.level + GREATEST($2::bigint, b.last) - b.last)
               + CASE WHEN LEAST($4::bigint, b.level + GREATEST($2::bigint, b.last) - b.last)
                           >= $3::bigint THEN $3::bigint ELSE 0 END
RETURNING level, last, allowed
)sql"};

// What a history shows for a statement: its name and parameters.
std::string StatementLabel(const SqlStatement& statement, std::span<const std::string> params) {
  std::string label(statement.name);
  for (size_t i = 0; i < params.size(); ++i) label += (i == 0 ? " " : ", ") + params[i];
  return label;
}

// Runs `statement` with `params` on `sql` as one step; the statement's own error (not a unique
// violation, which protocols read) as Internal naming `protocol`.
Task<Result<SqlReply>> SqlStep(Context& ctx, Sql& sql, const SqlStatement& statement,
                               std::vector<std::string> params, std::string_view protocol) {
  std::string label = StatementLabel(statement, params);
  Result<SqlReply> r = co_await ctx.Step(
      std::move(label), [&sql, &statement, &params] { return sql.Execute(statement, params); });
  if (r.ok() && r->is_error() && !r->unique_violation()) {
    co_return absl::InternalError(std::string(protocol) + ": " + std::string(statement.name) +
                                  " failed: " + r->error);
  }
  co_return r;
}

// The first `n` columns of the reply's only row, as integers (a boolean as 1 or 0, null as
// nullopt); Internal naming `protocol` when the reply has another shape.
using Integers = std::vector<std::optional<int64_t>>;
Result<Integers> OnlyRow(const SqlReply& r, size_t n, std::string_view protocol) {
  if (r.rows.size() != 1 || r.rows[0].size() < n) {
    return absl::InternalError(std::string(protocol) + ": expected one row of " +
                               std::to_string(n) + " columns, got " +
                               std::to_string(r.rows.size()) + " rows");
  }
  Integers out;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<std::string>& v = r.rows[0][i];
    int64_t x = 0;
    if (!v) {
      out.emplace_back();
    } else if (*v == "t" || *v == "f") {
      out.emplace_back(*v == "t" ? 1 : 0);
    } else if (const char* end = v->data() + v->size();
               std::from_chars(v->data(), end, x).ptr == end) {
      out.emplace_back(x);
    } else {
      return absl::InternalError(std::string(protocol) + ": '" + *v + "' is not an integer");
    }
  }
  return out;
}

class SqlProtocol : public Protocol {
 public:
  void Restart() override {}
  SqlProtocol(Sql& sql, const Policy& policy) : sql_(sql), policy_(policy) {}

 protected:
  Sql& sql_;
  Policy policy_;
};

// The fixed window's row: its key, window and the instant it stops mattering.
struct WindowRow {
  std::string key;
  int64_t window_start;
  Instant window_end;
  int64_t expires_at;
};

WindowRow WindowOf(const Request& request, Duration window) {
  const int64_t index = AlignedWindowIndex(request.now, window);
  const Instant end = AlignedWindowStart(index + 1, window);
  return {LimiterKey(request), ToUnixNanos(AlignedWindowStart(index, window)), end,
          ToUnixNanos(end + std::max(window, kTransitAllowance))};
}

Decision WindowDecision(const Policy& policy, const Request& request, const WindowRow& row,
                        bool allowed, int64_t count) {
  Decision d;
  d.limit = policy.limit;
  d.allowed = allowed;
  d.remaining = std::max<int64_t>(0, policy.limit - count);
  d.reset = row.window_end;
  if (!allowed) d.retry_after = request.cost > policy.limit ? kNever : row.window_end - request.now;
  return d;
}

// The count in the window's row, or none when it has no row.
Task<Result<std::optional<int64_t>>> WindowCount(Context& ctx, Sql& sql, const WindowRow& row,
                                                 std::string_view name) {
  std::vector<std::string> key = {row.key, std::to_string(row.window_start)};
  Result<SqlReply> read = co_await SqlStep(ctx, sql, kSelectCount, std::move(key), name);
  if (!read.ok()) co_return read.status();
  if (read->rows.empty()) co_return std::optional<int64_t>();
  Result<Integers> seen = OnlyRow(*read, 1, name);
  if (!seen.ok()) co_return seen.status();
  co_return std::optional<int64_t>((*seen)[0].value_or(0));
}

class SqlFixedWindowUpsert final : public SqlProtocol {
 public:
  using SqlProtocol::SqlProtocol;
  static constexpr std::string_view kName = "sql-fixed-window-upsert";

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override {
    if (Status s = Validate(request); !s.ok()) co_return s;
    const WindowRow row = WindowOf(request, policy_.window);
    // (Named, not braced in the co_await: GCC 12 miscompiles an initializer list there.)
    std::vector<std::string> params = {row.key,
                                       std::to_string(row.window_start),
                                       std::to_string(request.cost),
                                       std::to_string(policy_.limit),
                                       std::to_string(row.expires_at),
                                       std::to_string(ToUnixNanos(request.now))};
    Result<SqlReply> r = co_await SqlStep(ctx, sql_, kUpsert, std::move(params), kName);
    if (!r.ok()) co_return r.status();
    // The count after an admission (null: denied), and the count the statement saw.
    Result<Integers> counts = OnlyRow(*r, 2, kName);
    if (!counts.ok()) co_return counts.status();
    const std::optional<int64_t> admitted = (*counts)[0], seen = (*counts)[1];
    co_return WindowDecision(policy_, request, row, admitted.has_value(),
                             admitted.value_or(seen.value_or(0)));
  }

  // The window's row as it stands, read with a SELECT.
  Task<Result<Decision>> Peek(Context& ctx, const Request& request) override {
    if (Status s = Validate(request); !s.ok()) co_return s;
    const WindowRow row = WindowOf(request, policy_.window);
    const Result<std::optional<int64_t>> read = co_await WindowCount(ctx, sql_, row, kName);
    if (!read.ok()) co_return read.status();
    const int64_t count = read->value_or(0);
    const bool allowed = request.cost <= policy_.limit && count + request.cost <= policy_.limit;
    co_return WindowDecision(policy_, request, row, allowed, count);
  }
};

class SqlFixedWindowSelectUpdate final : public SqlProtocol {
 public:
  using SqlProtocol::SqlProtocol;
  static constexpr std::string_view kName = "sql-fixed-window-select-update";

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override {
    if (Status s = Validate(request); !s.ok()) co_return s;
    const WindowRow row = WindowOf(request, policy_.window);
    const std::string start = std::to_string(row.window_start);
    const std::string cost = std::to_string(request.cost);
    const Result<std::optional<int64_t>> read = co_await WindowCount(ctx, sql_, row, kName);
    if (!read.ok()) co_return read.status();
    const int64_t count = read->value_or(0);
    if (request.cost > policy_.limit || count + request.cost > policy_.limit) {
      co_return WindowDecision(policy_, request, row, false, count);
    }
    Result<SqlReply> written;
    if (!read->has_value()) {
      std::vector<std::string> insert = {row.key, start, cost, std::to_string(row.expires_at),
                                         std::to_string(ToUnixNanos(request.now))};
      written = co_await SqlStep(ctx, sql_, kInsertCount, std::move(insert), kName);
      if (!written.ok()) co_return written.status();
    }
    // The row was there, or someone inserted it since the SELECT: add to it.
    if (read->has_value() || written->unique_violation()) {
      std::vector<std::string> update = {row.key, start, cost};
      written = co_await SqlStep(ctx, sql_, kUpdateCount, std::move(update), kName);
      if (!written.ok()) co_return written.status();
    }
    // No row: swept since the SELECT; the admission counted alone.
    int64_t after = count + request.cost;
    if (!written->rows.empty()) {
      Result<Integers> counted = OnlyRow(*written, 1, kName);
      if (!counted.ok()) co_return counted.status();
      after = (*counted)[0].value_or(after);
    }
    co_return WindowDecision(policy_, request, row, true, after);
  }
};

class SqlTokenBucket final : public SqlProtocol {
 public:
  using SqlProtocol::SqlProtocol;
  static constexpr std::string_view kName = "sql-token-bucket";

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override {
    if (Status s = Validate(request); !s.ok()) co_return s;
    const int64_t interval = policy_.window.count();
    const int64_t full = policy_.limit * interval;
    const int64_t now = ToUnixNanos(request.now);
    // A cost above the burst is never admitted: no bigint overflow from cost x interval.
    const int64_t need = request.cost > policy_.limit ? full + 1 : request.cost * interval;
    std::vector<std::string> params = {LimiterKey(request), std::to_string(now),
                                       std::to_string(need), std::to_string(full),
                                       std::to_string(kTransitAllowance.count())};
    Result<SqlReply> r = co_await SqlStep(ctx, sql_, kBucket, std::move(params), kName);
    if (!r.ok()) co_return r.status();
    Decision d;
    d.limit = policy_.limit;
    if (r->rows.empty()) {  // a new key, and a cost above the burst
      d.remaining = policy_.limit;
      d.reset = request.now;
      d.retry_after = kNever;
      co_return d;
    }
    Result<Integers> state = OnlyRow(*r, 3, kName);  // level, last, allowed
    if (!state.ok()) co_return state.status();
    if (!(*state)[0] || !(*state)[1] || !(*state)[2]) {
      co_return absl::InternalError(std::string(kName) + ": a null column");
    }
    const int64_t level = *(*state)[0], last = *(*state)[1];
    d.allowed = *(*state)[2] != 0;
    d.remaining = level / interval;
    d.reset = FromUnixNanos(last + (full - level));
    if (!d.allowed) {
      d.retry_after = request.cost > policy_.limit
                          ? kNever
                          : FromUnixNanos(last + (need - level)) - request.now;
    }
    co_return d;
  }
};

}  // namespace

std::span<const SqlTable> SqlTables() { return kTables; }

std::string SqlTablesDdl() {
  std::string ddl = "CREATE SCHEMA IF NOT EXISTS " + std::string(kSqlSchema) + ";";
  for (const SqlTable& t : SqlTables()) ddl += std::string(t.create);
  return ddl;
}

std::unique_ptr<Protocol> MakeSqlFixedWindowUpsert(const Policy& policy, const Stores& stores) {
  return std::make_unique<SqlFixedWindowUpsert>(*stores.sql, policy);
}

std::unique_ptr<Protocol> MakeSqlFixedWindowSelectUpdate(const Policy& policy,
                                                         const Stores& stores) {
  return std::make_unique<SqlFixedWindowSelectUpdate>(*stores.sql, policy);
}

std::unique_ptr<Protocol> MakeSqlTokenBucket(const Policy& policy, const Stores& stores) {
  return std::make_unique<SqlTokenBucket>(*stores.sql, policy);
}

Status CheckSqlTokenBucket(const Policy& policy) {
  // Room for a refill of centuries above a full bucket.
  constexpr Int128 kMaxFull = Int128{1} << 62;
  if (Int128{policy.limit} * policy.window.count() < kMaxFull) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "sql-token-bucket keeps its level in bigint nanoseconds: a burst of " +
      std::to_string(policy.limit) + " every " + FormatDuration(policy.window) +
      " is more than it holds (burst x interval must stay below 2^62 ns)");
}

}  // namespace ratelab
