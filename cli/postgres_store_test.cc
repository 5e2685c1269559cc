// The simulator on a real PostgreSQL server: each SQL protocol's verdict, the same histories from
// the same seeds, SQL protocols deciding exactly as their in-process algorithms, rows that
// outlive their expiry found, and an existing database used with care. Each test starts its own
// servers (testing/postgres.h).
#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_test_util.h"
#include "cli/ratelab_cli.h"
#include "impl/store/postgres_sql.h"
#include "live/server_stores.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "testing/postgres.h"

namespace ratelab {
namespace {

// Two correct SQL protocols beside the in-process limiters of their algorithms (on one node, so
// the in-process limiters hold one state too), on bursts whose requests overlap in flight.
constexpr char kPairs[] = R"yaml(name: sql-pairs
store: {durability: always}
limiters:
  - {protocol: memory-fixed-window, algorithm: fixed-window, limit: 3, window: 2s}
  - {protocol: sql-fixed-window-upsert, algorithm: fixed-window, limit: 3, window: 2s}
  - {protocol: memory-token-bucket, algorithm: token-bucket, burst: 3, interval: 500ms}
  - {protocol: sql-token-bucket, algorithm: token-bucket, burst: 3, interval: 500ms}
claim: {limit: 8, window: 2s}  # what both keep: two windows' 3 each; the bucket's 3, then 4 more
traffic:
  - {type: zipf-users, users: 4, exponent: 1.1, duration: 12s, mean_gap: 80ms}
  - {type: burst, user: u1, at: 3s, count: 8}
  - {type: burst, user: u2, at: 5s, count: 8}
checks: [promise, false-denials, retry-after, key-expiry]
)yaml";

Result<RunResult> RunPairs(const std::string& store, uint64_t seed) {
  Result<Scenario> s = ParseScenario(kPairs, "sql-pairs");
  if (!s.ok()) return s.status();
  Result<std::shared_ptr<StoreSource>> source = OpenStoreSource(store);
  if (!source.ok()) return source.status();
  s->stores = *source;
  return RunScenario(*s, seed);
}

// Each request's decision, in order.
std::vector<std::optional<Decision>> Decisions(const LimiterOutcome& o) {
  std::vector<std::optional<Decision>> out;
  for (const HistoryEvent& e : o.history) out.push_back(e.decision);
  return out;
}

TEST(PostgresStore, SqlProtocolsDecideAsTheirAlgorithmAndTheSameSeedGivesTheSameHistory) {
  RATELAB_REQUIRE_POSTGRES();
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const Result<RunResult> first = RunPairs("postgres", seed);
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_EQ(first->limiters.size(), 4u);
    for (size_t i = 0; i < 4; i += 2) {
      const LimiterOutcome& memory = first->limiters[i];
      const LimiterOutcome& sql = first->limiters[i + 1];
      EXPECT_GT(memory.denied, 0) << memory.name << ": the traffic must reach the limit";
      EXPECT_EQ(Decisions(memory), Decisions(sql)) << sql.name << " seed " << seed;
      EXPECT_EQ(sql.violation_count(), 0) << sql.name;
      EXPECT_GT(sql.state.keys, 0) << sql.name << ": rows are counted as state";
    }
    ASSERT_EQ(first->notes.size(), 1u);
    EXPECT_NE(first->notes[0].find("private PostgreSQL server"), std::string::npos);
    const Result<RunResult> again = RunPairs("postgres", seed);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(first->history_hash(), again->history_hash()) << "seed " << seed;
  }
}

// What `check` prints, without the timing.
CliOutcome CheckSql(std::vector<std::string> args) {
  args.insert(args.begin(), "check");
  const CliOutcome r = Ratelab(args);
  EXPECT_NE(r.exit, kExitBadInput) << r.err;
  return r;
}

TEST(PostgresStore, EachSqlProtocolsVerdict) {
  RATELAB_REQUIRE_POSTGRES();
  // Correct, under crashes and store restarts with every commit kept.
  CliOutcome r = CheckSql({"sql-fixed-window-upsert", "--seeds", "6", "--store", "postgres"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  r = CheckSql(
      {"sql-token-bucket", "--burst", "2", "--rate", "4", "--seeds", "6", "--store", "postgres"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // The split read and write races: two requests both read room for one.
  r = CheckSql({"sql-fixed-window-select-update", "--limit", "1", "--faults", "none", "--store",
                "postgres"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("witness (2 request(s), +0s at "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sql_fixed_window_select"), std::string::npos) << r.out;
  // The same seed, the same verdict and witness, on every run.
  const CliOutcome again = CheckSql({"sql-fixed-window-select-update", "--limit", "1", "--faults",
                                     "none", "--store", "postgres"});
  EXPECT_EQ(r.out, again.out);
  // At the default policy (2 per 10s) within the default seeds: N + 1 in one window.
  r = CheckSql({"sql-fixed-window-select-update", "--store", "postgres"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("witness (3 request(s), +0s at "), std::string::npos) << r.out;
  // Without persistence, a store restart forgets the bucket.
  r = CheckSql({"sql-token-bucket", "--burst", "1", "--rate", "1", "--checks", "survives-restart",
                "--faults", "store-restart", "--durability", "none", "--seeds", "20", "--store",
                "postgres"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("survives-restart"), std::string::npos) << r.out;
}

TEST(PostgresStore, SqlProtocolsWithoutPostgresSayWhatToPass) {
  const CliOutcome r = Ratelab({"check", "sql-token-bucket"});
  EXPECT_NE(r.exit, kExitOk);
  EXPECT_NE(r.err.find("--store postgres"), std::string::npos) << r.err;
  // PostgreSQL named for a scenario of kv protocols: none would run there, so it is refused.
  const CliOutcome kv = Ratelab({"run", ExampleScenario("store-outage"), "--store", "postgres"});
  EXPECT_EQ(kv.exit, kExitBadInput) << kv.out;
  EXPECT_NE(kv.err.find("store postgres: no limiter of store-outage keeps its state there"),
            std::string::npos)
      << kv.err;
  EXPECT_NE(kv.err.find("it takes a sql-* protocol"), std::string::npos) << kv.err;
  const CliOutcome bad = Ratelab({"check", "sql-token-bucket", "--store", "postgresql://h/d?x=1"});
  EXPECT_EQ(bad.exit, kExitBadInput);
  EXPECT_NE(bad.err.find("postgresql://h/d?x=1"), std::string::npos) << bad.err;
}

// Real threads on a private server: the split read and write is caught racing, the one-statement
// upsert keeps its promise, and a SQL protocol is not stressed on Redis.
TEST(PostgresStore, StressRunsTheSqlProtocolsFromThreads) {
  RATELAB_REQUIRE_POSTGRES();
  CliOutcome r = Ratelab({"stress", "sql-fixed-window-select-update", "--limit", "5", "--window",
                          "1s", "--duration", "2s"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.err.find("a private PostgreSQL server"), std::string::npos) << r.err;
  r = Ratelab(
      {"stress", "sql-fixed-window-upsert", "--limit", "5", "--window", "1s", "--duration", "1s"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("aligned-window-cap: kept"), std::string::npos) << r.out;
  r = Ratelab({"stress", "sql-token-bucket", "--store", "redis"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("stress runs it on PostgreSQL"), std::string::npos) << r.err;
}

constexpr SqlStatement kInsertRow{
    "test_insert_row",
    "INSERT INTO ratelab.fixed_window (key, window_start, count, expires_at) "
    "VALUES ($1::text, 0, 1, $2::bigint)"};

TEST(PostgresStore, RowsPastTheirExpiryAreListedForTheKeyExpiryCheck) {
  RATELAB_REQUIRE_POSTGRES();
  Result<std::shared_ptr<StoreSource>> source = OpenStoreSource("postgres");
  ASSERT_TRUE(source.ok());
  Result<std::unique_ptr<SqlBackend>> sql = (*source)->OpenSql(Durability::kNone);
  ASSERT_TRUE(sql.ok()) << sql.status();
  for (const auto& [key, at] : {std::pair{"old", 100}, std::pair{"new", 300}}) {
    const std::vector<std::string> params = {key, std::to_string(at)};
    Result<SqlReply> r = (*sql)->Execute(kInsertRow, params);
    ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->error : r.status().ToString());
  }
  const std::vector<SqlRow> rows = (*sql)->RowsExpiredBefore(FromUnixNanos(200));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].table, "ratelab.fixed_window");
  EXPECT_EQ(rows[0].key, "old");
  EXPECT_EQ(rows[0].expires_at, 100);
  EXPECT_EQ((*sql)->Usage().keys, 2);
  EXPECT_TRUE((*sql)->failure().ok());
}

// A fixed window as a developer who forgets the sweep writes it: the same conditional upsert as
// sql-fixed-window-upsert, without the DELETE of expired rows.
constexpr SqlStatement kUpsertWithoutSweep{"test_upsert_without_sweep", R"sql(
INSERT INTO ratelab.fixed_window AS w (key, window_start, count, expires_at)
VALUES ($1::text, $2::bigint, 1, $4::bigint)
ON CONFLICT (key, window_start) DO UPDATE SET count = w.count + 1 WHERE w.count < $3::bigint
RETURNING count)sql"};

class UpsertWithoutSweep final : public Protocol {
 public:
  UpsertWithoutSweep(Sql& sql, const Policy& policy) : sql_(sql), policy_(policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override {
    const int64_t index = AlignedWindowIndex(request.now, policy_.window);
    const Instant end = AlignedWindowStart(index + 1, policy_.window);
    std::vector<std::string> params = {
        LimiterKey(request), std::to_string(ToUnixNanos(AlignedWindowStart(index, policy_.window))),
        std::to_string(policy_.limit), std::to_string(ToUnixNanos(end + policy_.window))};
    Result<SqlReply> r = co_await ctx.Step("upsert " + params[0], [this, &params] {
      return sql_.Execute(kUpsertWithoutSweep, params);
    });
    if (!r.ok()) co_return r.status();
    if (r->is_error()) co_return absl::InternalError(r->error);
    Decision d;
    d.allowed = !r->rows.empty();
    d.limit = policy_.limit;
    d.reset = end;
    if (!d.allowed) d.retry_after = end - request.now;
    co_return d;
  }
  void Restart() override {}

 private:
  Sql& sql_;
  Policy policy_;
};

TEST(PostgresStore, TheKeyExpiryCheckFindsTheRowsOfAProtocolThatNeverSweeps) {
  RATELAB_REQUIRE_POSTGRES();
  Result<Scenario> s = ParseScenario(R"yaml(name: sweep
limiters:
  - {protocol: sql-fixed-window-upsert, algorithm: fixed-window, limit: 2, window: 1s}
traffic:
  - {type: burst, user: early, at: 0s, count: 3}
  - {type: burst, user: late, at: 30s, count: 1}
checks: [key-expiry]
)yaml",
                                     "sweep");
  ASSERT_TRUE(s.ok()) << s.status();
  LimiterSpec forgetful = s->limiters[0];
  auto custom = std::make_shared<ProtocolInfo>(*FindProtocol("sql-fixed-window-upsert"));
  custom->name = "upsert without sweep";
  custom->make = [](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(std::make_unique<UpsertWithoutSweep>(*stores.sql, policy));
  };
  forgetful.protocol = std::move(custom);
  s->limiters.push_back(forgetful);
  Result<std::shared_ptr<StoreSource>> source = OpenStoreSource("postgres");
  ASSERT_TRUE(source.ok()) << source.status();
  s->stores = *source;
  Result<RunResult> r = RunScenario(*s, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->limiters.size(), 2u);
  EXPECT_EQ(r->limiters[0].violation_count(), 0) << "the upsert sweeps as it writes";
  EXPECT_EQ(r->limiters[1].admitted, 3);
  ASSERT_EQ(r->limiters[1].violation_count(), 1);
  const Violation& v = r->limiters[1].checks[0].violations[0];
  EXPECT_EQ(v.key, "row of ratelab.fixed_window for user:early:/api");
  EXPECT_NE(v.summary.find("before the last admission, and was not deleted"), std::string::npos)
      << v.summary;
  EXPECT_EQ(v.witness.size(), 3u) << "the three requests that wrote the row";
}

TEST(PostgresStore, AnExistingDatabaseMustBeEmptyOfRatelabsRowsAndCannotBeRestarted) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  PostgresSql theirs(server->conninfo());
  ASSERT_TRUE(theirs
                  .Run("CREATE TABLE public.mine (v int); INSERT INTO public.mine VALUES (7);"
                       "CREATE SCHEMA ratelab; CREATE TABLE ratelab.fixed_window (key text, "
                       "window_start bigint, count bigint, expires_at bigint, PRIMARY KEY (key, "
                       "window_start)); INSERT INTO ratelab.fixed_window VALUES ('x', 0, 1, 0);")
                  .ok());
  CliOutcome r =
      Ratelab({"check", "sql-fixed-window-upsert", "--seeds", "2", "--store", server->url()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("already holds 1 rows"), std::string::npos) << r.err;
  ASSERT_TRUE(theirs.Run("DELETE FROM ratelab.fixed_window").ok());
  r = Ratelab({"check", "sql-fixed-window-upsert", "--seeds", "3", "--store", server->url()});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.err.find("no store restarts"), std::string::npos) << r.err;
  r = Ratelab(
      {"check", "sql-fixed-window-upsert", "--faults", "store-restart", "--store", server->url()});
  EXPECT_EQ(r.exit, kExitBadInput);
  // Their table is as it was, and ratelab's are empty again.
  constexpr SqlStatement kTheirs{"test_theirs", "SELECT v FROM public.mine"};
  Result<SqlReply> mine = theirs.Execute(kTheirs, {});
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->rows.size(), 1u);
  EXPECT_EQ(mine->rows[0][0], "7");
  constexpr SqlStatement kOurs{"test_ours",
                               "SELECT (SELECT count(*) FROM ratelab.fixed_window) + "
                               "(SELECT count(*) FROM ratelab.token_bucket)"};
  Result<SqlReply> ours = theirs.Execute(kOurs, {});
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->rows[0][0], "0");
}

}  // namespace
}  // namespace ratelab
