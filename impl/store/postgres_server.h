// A private PostgreSQL server (Debian's postgresql), for tests, benchmarks and `--store
// postgres`: initdb into a fresh temp dir, then the postmaster listening on a unix socket in that
// dir only (no TCP), trusting local connections as the superuser `ratelab`. PostgreSQL refuses
// to run as root, so when ratelab is root the server runs as the `postgres` user (setpriv), in a
// dir handed to it. Stopped, killed (-9, the whole process group: a crash of every server
// process at once) and restarted on the same data dir at will; the destructor kills it and
// removes the dir, and what a process killed outright leaves behind, the next Start removes.
//
// Durability, as PostgreSQL is configured for it (a kill -9 of every server process; the kernel
// keeps what was written, so fsync plays no part in it, only in a crash of the machine):
//   none      fsync off, synchronous_commit off; the backend makes ratelab's tables UNLOGGED,
//             which crash recovery empties: a restart loses every row, as on redis-server
//   everysec  synchronous_commit off: a commit is answered before its WAL is written; the WAL
//             writer writes it within three wal_writer_delay (200 ms), so a kill loses the
//             commits of the last moments, which ones depending on the machine's timing
//   always    synchronous_commit on, fsync on: a commit is answered once its WAL is flushed,
//             so a kill loses nothing that was answered
#ifndef RATELAB_IMPL_STORE_POSTGRES_SERVER_H_
#define RATELAB_IMPL_STORE_POSTGRES_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/durability.h"

namespace ratelab {

struct PostgresServerOptions {
  Durability durability = Durability::kNone;
  // More settings, each "name=value" (passed as -c name=value).
  std::vector<std::string> settings;
};

class PostgresServer {
 public:
  // Runs initdb and starts the server, waiting until it accepts connections. NotFound if
  // PostgreSQL's programs are missing (Debian package postgresql); with the end of its log,
  // Unavailable if it exits while starting and DeadlineExceeded if it does not answer in 30 s.
  static Result<std::unique_ptr<PostgresServer>> Start(PostgresServerOptions options);
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // A fast shutdown (SIGINT): the server writes a checkpoint and exits.
  Status Stop();
  // SIGKILL to every server process: nothing more gets written.
  Status Kill();
  // Kill, then start again on the same data dir (crash recovery runs).
  Status Restart();
  // Start again after Stop or Kill.
  Status Launch();
  // Stops every server process (SIGSTOP to its group), as a stalled machine would: connections
  // stay open and nothing is answered, until Resume (SIGCONT).
  Status Pause();
  Status Resume();
  bool running() const { return pid_ > 0; }

  // A libpq connection string for the database `postgres` as the superuser.
  std::string conninfo() const;
  // The same as a URL: postgresql://ratelab@/postgres?host=DIR.
  std::string url() const;
  const std::string& dir() const { return dir_; }
  const PostgresServerOptions& options() const { return options_; }

 private:
  PostgresServer(PostgresServerOptions options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}
  Status InitDb();
  Status WaitUntilUp();
  Status Signal(int signal);

  PostgresServerOptions options_;
  std::string dir_;
  pid_t pid_ = -1;
};

// The postgres settings (-c name=value) for `durability`.
std::vector<std::string> PostgresDurabilitySettings(Durability durability);

// Where PostgreSQL's server programs are: RATELAB_POSTGRES_BIN, or the newest
// /usr/lib/postgresql/N/bin holding initdb; NotFound naming the package otherwise.
Result<std::string> PostgresBinDir();

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_POSTGRES_SERVER_H_
