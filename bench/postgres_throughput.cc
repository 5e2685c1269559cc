// Decisions per second and latency of the SQL protocols through the Sql store (PostgresSql) on a
// private PostgreSQL server, beside pgbench running the protocol's own statement as a custom
// script against the same server with the same number of clients. The last column is ratelab's
// rate over pgbench's.
//
// ratelab runs the protocol's own code (the Decide coroutine, its parameters, its reply parsing)
// for random users among 10 000; pgbench runs the same prepared statement (-M prepared) with the
// same parameters drawn the same way. On both sides the connections share as many threads
// (at most two), each thread keeping a statement in flight on each of its connections: pgbench's
// clients through libpq's asynchronous calls, ratelab's through a PostgresPool, as `ratelab serve`
// decides on PostgreSQL. pgbench has no clock, so both
// sides decide every request at the instant the setting starts: the statement does the same work
// on both (nothing expires, so the sweeps find nothing to delete). Policies are generous, so
// every decision takes the admitting path. Latency is per statement, from
// sending to the answer (pgbench's per-transaction log).
//
// The machine's noise (the WAL writer, a checkpoint, the scheduler with 50 backends on two
// cores) moves one run's figures by a third either way, so each setting is measured in several
// rounds, the two sides taking turns to go first, and the median of each side's rounds is shown.
//
// Run: build/bench/postgres_throughput [--seconds S] [--rounds R]   (defaults 2 and 5)
#include <stdio.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/peer_figures.h"
#include "impl/core/system_clock.h"
#include "impl/core/task.h"
#include "impl/limiters/protocol.h"
#include "impl/limiters/sql_protocols.h"
#include "impl/store/postgres_pool.h"
#include "impl/store/postgres_server.h"
#include "impl/store/postgres_sql.h"
#include "impl/store/server_process.h"
#include "sim/random.h"

namespace ratelab {
namespace {

constexpr int kUsers = 10'000;

[[noreturn]] void Die(const Status& s) {
  std::cerr << "postgres_throughput: " << s << "\n";
  std::exit(1);
}

// Threads for `clients` connections, on both sides.
int PgbenchThreads(int clients) { return std::min(clients, 2); }

// A protocol, its generous policy, and its statement as a pgbench script: the same parameters,
// from pgbench variables (:now is the bench's start in unix nanoseconds).
struct Subject {
  std::string protocol;
  Policy policy;
  std::string script;
};

// `script` with each :now typed (pgbench sends variables as untyped parameters).
std::string Typed(std::string script) {
  for (size_t at = script.find(":now"); at != std::string::npos;
       at = script.find(":now", at + 20)) {
    script.replace(at, 4, "CAST(:now AS bigint)");
  }
  return script;
}

std::vector<Subject> Subjects() {
  const int64_t hour = std::chrono::nanoseconds(std::chrono::hours(1)).count();
  // (pgbench would read the :u of 'user:u' as its variable, even inside quotes.)
  const std::string key = "('user' || chr(58) || 'u' || CAST(:u AS text) || ':/api')";
  return {
      {"sql-fixed-window-upsert",
       Policy::Window(Algorithm::kFixedWindow, 1'000'000'000, std::chrono::hours(1)),
       "\\set u random(0, " + std::to_string(kUsers - 1) + ")\n" +
           Typed(
               "WITH swept AS (DELETE FROM ratelab.fixed_window WHERE ctid IN (SELECT ctid FROM "
               "ratelab.fixed_window WHERE expires_at < :now FOR UPDATE SKIP LOCKED)), admitted AS "
               "(INSERT INTO ratelab.fixed_window AS w (key, window_start, count, expires_at) "
               "SELECT " +
               key + ", :now - :now % " + std::to_string(hour) + ", 1, :now - :now % " +
               std::to_string(hour) + " + " + std::to_string(2 * hour) +
               " WHERE 1 <= 1000000000 ON CONFLICT (key, window_start) DO UPDATE SET count = "
               "w.count "
               "+ EXCLUDED.count WHERE w.count + EXCLUDED.count <= 1000000000 RETURNING count) "
               "SELECT "
               "(SELECT count FROM admitted), (SELECT count FROM ratelab.fixed_window WHERE key "
               "= " +
               key + " AND window_start = :now - :now % " + std::to_string(hour) + ");\n")},
      {"sql-token-bucket",
       Policy::Bucket(Algorithm::kTokenBucket, 1'000'000, std::chrono::microseconds(1)),
       "\\set u random(0, " + std::to_string(kUsers - 1) + ")\n" +
           Typed(
               "WITH swept AS (DELETE FROM ratelab.token_bucket WHERE ctid IN (SELECT ctid FROM "
               "ratelab.token_bucket WHERE expires_at < :now AND key <> " +
               key +
               " FOR UPDATE SKIP LOCKED)) INSERT INTO ratelab.token_bucket AS b (key, level, last, "
               "allowed, expires_at) SELECT " +
               key +
               ", 1000000000 - 1000, :now, true, :now + 1000 + 1000000000 WHERE 1000 <= 1000000000 "
               "ON CONFLICT (key) DO UPDATE SET allowed = LEAST(1000000000, b.level + "
               "GREATEST(:now, "
               "b.last) - b.last) >= 1000, level = LEAST(1000000000, b.level + GREATEST(:now, "
               "b.last) "
               "- b.last) - CASE WHEN LEAST(1000000000, b.level + GREATEST(:now, b.last) - b.last) "
               ">= "
               "1000 THEN 1000 ELSE 0 END, last = GREATEST(:now, b.last), expires_at = "
               "GREATEST(:now, b.last) + 1000000000 + 1000000000 - LEAST(1000000000, b.level + "
               "GREATEST(:now, b.last) - b.last) + CASE WHEN LEAST(1000000000, b.level + "
               "GREATEST(:now, b.last) - b.last) >= 1000 THEN 1000 ELSE 0 END RETURNING level, "
               "last, "
               "allowed;\n")},
  };
}

// One connection's decision in flight.
struct Slot {
  explicit Slot(Executor& executor) : ctx(executor) {}
  Context ctx;
  Request request;
  std::optional<Task<Result<Decision>>> decision;
  Instant sent{};
};

// `clients` connections shared by as many threads as pgbench has (-j), each thread a PostgresPool
// keeping a decision in flight on each of its connections: the protocol's own Decide, for
// random users.
Figures RunRatelab(const Subject& subject, const std::string& conninfo, int clients, int seconds,
                   Instant now) {
  const SystemClock clock;
  const int threads = PgbenchThreads(clients);
  std::atomic<int64_t> decisions = 0;
  std::vector<std::vector<double>> latencies(static_cast<size_t>(threads));
  const Instant start = clock.Now();
  const Instant end = start + std::chrono::seconds(seconds);
  {
    std::vector<std::jthread> running;
    for (int t = 0; t < threads; ++t) {
      // Clients dealt out as pgbench deals them to its threads.
      const int share = clients / threads + (t < clients % threads ? 1 : 0);
      running.emplace_back([&, t, share] {
        PostgresPool pool(conninfo, share);
        Stores stores;
        stores.sql = &pool;
        Result<std::unique_ptr<Protocol>> p =
            MakeProtocol(subject.protocol, subject.policy, stores);
        if (!p.ok()) Die(p.status());
        Random random(static_cast<uint64_t>(t) + 1);
        std::vector<double>& mine = latencies[static_cast<size_t>(t)];
        std::deque<Slot> slots;
        const auto begin = [&](Slot& slot) {
          slot.request = {"user", "u" + std::to_string(random.Uniform(0, kUsers)), "/api", 1, now};
          slot.sent = clock.Now();
          slot.decision.emplace((*p)->Decide(slot.ctx, slot.request));
          slot.decision->Start();
        };
        for (int c = 0; c < share; ++c) begin(slots.emplace_back(pool));
        for (size_t open = slots.size(); open > 0;) {
          pool.Turn();
          for (Slot& slot : slots) {
            if (!slot.decision || !slot.decision->done()) continue;
            const Result<Decision>& d = slot.decision->result();
            if (!d.ok()) Die(d.status());
            if (!d->allowed) Die(absl::InternalError(subject.protocol + " denied a request"));
            mine.push_back(
                std::chrono::duration<double, std::milli>(clock.Now() - slot.sent).count());
            decisions.fetch_add(1, std::memory_order_relaxed);
            slot.decision.reset();
            if (clock.Now() < end) {
              begin(slot);
            } else {
              --open;
            }
          }
        }
      });
    }
  }
  const double elapsed = std::chrono::duration<double>(clock.Now() - start).count();
  std::vector<double> all;
  for (const std::vector<double>& l : latencies) all.insert(all.end(), l.begin(), l.end());
  return {static_cast<double>(decisions.load()) / elapsed, Percentile(all, 0.5),
          Percentile(all, 0.99)};
}

// pgbench's output for one run of `seconds`; nullopt when it finished no transaction in them (on
// a loaded machine, 50 connections can take pgbench's whole second to open).
std::optional<std::string> RunPgbenchOnce(const Subject& subject, const PostgresServer& server,
                                          const std::string& bin, int clients, int seconds,
                                          Instant at) {
  const std::string dir = server.dir() + "/pgbench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/script.sql") << subject.script;
  const int64_t now = ToUnixNanos(at);
  const std::vector<std::string> args = {bin + "/pgbench",
                                         "-n",
                                         "-M",
                                         "prepared",
                                         "-c",
                                         std::to_string(clients),
                                         "-j",
                                         std::to_string(PgbenchThreads(clients)),
                                         "-T",
                                         std::to_string(seconds),
                                         "-D",
                                         "now=" + std::to_string(now),
                                         "-f",
                                         dir + "/script.sql",
                                         "-l",
                                         "--log-prefix",
                                         dir + "/log",
                                         "-h",
                                         server.dir(),
                                         "-U",
                                         "ratelab",
                                         "postgres"};
  Result<pid_t> pid = SpawnLogged(args, nullptr, dir + "/out.txt");
  if (!pid.ok()) Die(pid.status());
  int status = 0;
  waitpid(*pid, &status, 0);
  std::ifstream out(dir + "/out.txt");
  std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Die(absl::InternalError("pgbench failed:\n" + text));
  }
  if (text.find("tps = ") == std::string::npos &&
      text.find("number of transactions actually processed: 0\n") != std::string::npos) {
    return std::nullopt;
  }
  return text;
}

Figures RunPgbench(const Subject& subject, const PostgresServer& server, const std::string& bin,
                   int clients, int seconds, Instant at) {
  std::optional<std::string> said;
  // A run that finished nothing is tried again, twice as long, twice at most.
  for (int tries = 0; tries < 3 && !said; ++tries, seconds *= 2) {
    said = RunPgbenchOnce(subject, server, bin, clients, seconds, at);
  }
  if (!said) {
    Die(absl::InternalError(absl::StrCat("pgbench finished no transaction in ", seconds / 2,
                                         " s with ", clients, " clients")));
  }
  const std::string& text = *said;
  const std::string dir = server.dir() + "/pgbench";
  Figures f;
  const size_t tps = text.find("tps = ");
  if (tps == std::string::npos) Die(absl::InternalError("no tps in pgbench's output:\n" + text));
  f.per_second = std::atof(text.c_str() + tps + 6);
  // Each log line: client_id transaction_no time_us script_no time_epoch time_us_part.
  std::vector<double> latencies;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.path().filename().string().starts_with("log")) continue;
    std::ifstream log(e.path());
    for (std::string line; std::getline(log, line);) {
      std::istringstream fields(line);
      long client = 0, transaction = 0;
      double us = 0;
      if (fields >> client >> transaction >> us) latencies.push_back(us / 1000.0);
    }
  }
  f.p50_ms = Percentile(latencies, 0.5);
  f.p99_ms = Percentile(latencies, 0.99);
  return f;
}

int Main(int argc, char** argv) {
  int seconds = 2;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::cerr << "usage: postgres_throughput [--seconds S] [--rounds R]\n";
      return 2;
    }
  }
  Result<std::string> bin = PostgresBinDir();
  if (!bin.ok()) Die(bin.status());
  PostgresServerOptions options;
  options.durability = Durability::kEverySec;  // synchronous_commit off, on both sides
  Result<std::unique_ptr<PostgresServer>> server = PostgresServer::Start(options);
  if (!server.ok()) Die(server.status());
  PostgresSql admin((*server)->conninfo());
  std::string ddl = "CREATE SCHEMA ratelab;";
  for (const SqlTable& t : SqlTables()) ddl += std::string(t.create);
  if (Status s = admin.Run(ddl); !s.ok()) Die(s);

  printf("%-26s %8s %14s %9s %9s %14s %9s %9s %7s\n", "protocol", "clients", "ratelab/s", "p50 ms",
         "p99 ms", "pgbench/s", "p50 ms", "p99 ms", "ratio");
  for (const Subject& subject : Subjects()) {
    for (int clients : {1, 16, 50}) {
      const auto truncate = [&] {
        if (Status s = admin.Run("TRUNCATE ratelab.fixed_window, ratelab.token_bucket"); !s.ok()) {
          Die(s);
        }
      };
      std::vector<Figures> ours_rounds, theirs_rounds;
      // Every round at the setting's instant: its tables emptied first, it does the same work.
      const Instant now = SystemClock().Now();
      TakeTurns(
          rounds,
          [&] {
            truncate();
            ours_rounds.push_back(
                RunRatelab(subject, (*server)->conninfo(), clients, seconds, now));
          },
          [&] {
            truncate();
            theirs_rounds.push_back(RunPgbench(subject, **server, *bin, clients, seconds, now));
          });
      const Figures ours = Median(ours_rounds);
      const Figures theirs = Median(theirs_rounds);
      printf("%-26s %8d %14.0f %9.3f %9.3f %14.0f %9.3f %9.3f %7.2f\n", subject.protocol.c_str(),
             clients, ours.per_second, ours.p50_ms, ours.p99_ms, theirs.per_second, theirs.p50_ms,
             theirs.p99_ms, ours.per_second / theirs.per_second);
      fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) { return ratelab::Main(argc, argv); }
