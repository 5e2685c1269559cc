#include "impl/store/postgres_server.h"

#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "impl/store/server_process.h"

namespace ratelab {

namespace {

namespace fs = std::filesystem;

constexpr char kDirPrefix[] = "ratelab-pg-";
constexpr char kLogName[] = "postgres.log";
constexpr char kDataName[] = "data";
constexpr char kUser[] = "ratelab";
// The unprivileged account the server runs as when ratelab is root.
constexpr char kServiceUser[] = "postgres";

// The arguments that run `program` from `bin` as the service user when this process is root.
std::vector<std::string> AsServer(const std::string& bin, const std::string& program) {
  std::vector<std::string> args;
  if (geteuid() == 0) {
    args = {"setpriv", std::string("--reuid=") + kServiceUser,
            std::string("--regid=") + kServiceUser, "--clear-groups", "--"};
  }
  args.push_back(bin + "/" + program);
  return args;
}

// Hands `dir` to the service user when this process is root (the server writes there).
Status HandOver(const std::string& dir) {
  if (geteuid() != 0) return absl::OkStatus();
  const passwd* pw = getpwnam(kServiceUser);
  if (pw == nullptr) {
    return absl::NotFoundError(std::string("there is no user '") + kServiceUser +
                               "' to run PostgreSQL as (install Debian's package postgresql)");
  }
  if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
    return absl::InternalError("cannot hand " + dir + " to " + kServiceUser + ": " +
                               strerror(errno));
  }
  return absl::OkStatus();
}

// Waits for `pid` to exit: its exit status, or -1.
int WaitExit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

Result<std::string> PostgresBinDir() {
  if (const char* p = getenv("RATELAB_POSTGRES_BIN"); p != nullptr && *p != '\0') return p;
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    char* end = nullptr;
    const long version = strtol(name.c_str(), &end, 10);
    if (end == name.c_str() || *end != '\0') continue;
    if (access((e.path() / "bin" / "initdb").c_str(), X_OK) != 0) continue;
    if (version > best_version) {
      best_version = static_cast<int>(version);
      best = (e.path() / "bin").string();
    }
  }
  if (best.empty()) {
    return absl::NotFoundError(
        "PostgreSQL's server programs are not installed (no /usr/lib/postgresql/N/bin/initdb; "
        "install Debian's package postgresql, or set RATELAB_POSTGRES_BIN; scripts/test does)");
  }
  return best;
}

std::vector<std::string> PostgresDurabilitySettings(Durability durability) {
  switch (durability) {
    case Durability::kNone:
      return {"fsync=off", "synchronous_commit=off", "full_page_writes=off"};
    case Durability::kEverySec:
      return {"fsync=on", "synchronous_commit=off"};
    case Durability::kAlways:
      return {"fsync=on", "synchronous_commit=on"};
  }
  return {};
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::Start(PostgresServerOptions options) {
  Result<std::string> bin = PostgresBinDir();
  if (!bin.ok()) return bin.status();
  RemoveAbandonedServers(TempRoot(), kDirPrefix, "postgres");
  Result<std::string> dir = MakeServerDir(kDirPrefix);
  if (!dir.ok()) return dir.status();
  std::unique_ptr<PostgresServer> server(new PostgresServer(std::move(options), *std::move(dir)));
  // The socket is DIR/.s.PGSQL.5432.
  if (server->dir_.size() + 16 >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError("the socket dir " + server->dir_ +
                                      " is too long for a unix socket; set TMPDIR shorter");
  }
  if (Status s = HandOver(server->dir_); !s.ok()) return s;
  if (Status s = server->InitDb(); !s.ok()) return s;
  if (Status s = server->Launch(); !s.ok()) return s;
  return server;
}

PostgresServer::~PostgresServer() {
  // Immediate shutdown: as fast as a kill, and the server removes its System V shared memory
  // (a SIGKILL leaves the segment behind, and the kernel's 4096 run out over many runs).
  if (running()) (void)Signal(SIGQUIT);
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

Status PostgresServer::InitDb() {
  const std::string bin = *PostgresBinDir();
  std::vector<std::string> args = AsServer(bin, "initdb");
  for (const char* a : {"--no-sync", "--auth=trust", "--encoding=UTF8", "--locale=C"}) {
    args.emplace_back(a);
  }
  args.push_back(std::string("--username=") + kUser);
  args.push_back("--pgdata=" + dir_ + "/" + kDataName);
  const std::string log = dir_ + "/initdb.log";
  const Result<pid_t> pid = SpawnLogged(std::move(args), nullptr, log);
  if (!pid.ok()) return pid.status();
  WriteServerOwner(dir_, *pid);
  if (WaitExit(*pid) != 0) {
    return absl::UnavailableError("initdb failed; its log ends:" + LogTail(log));
  }
  return absl::OkStatus();
}

Status PostgresServer::Launch() {
  if (running()) return absl::FailedPreconditionError("postgres is already running");
  std::vector<std::string> args = AsServer(*PostgresBinDir(), "postgres");
  for (std::string a : {std::string("-D"), dir_ + "/" + kDataName, std::string("-k"), dir_}) {
    args.push_back(std::move(a));
  }
  std::vector<std::string> settings = {"listen_addresses=", "unix_socket_permissions=0700",
                                       "max_connections=120", "shared_buffers=32MB",
                                       "logging_collector=off"};
  for (std::string& s : PostgresDurabilitySettings(options_.durability)) {
    settings.push_back(std::move(s));
  }
  for (const std::string& s : options_.settings) settings.push_back(s);
  for (const std::string& s : settings) {
    args.push_back("-c");
    args.push_back(s);
  }
  // After a kill, the killed processes may still hold the old shared memory for a moment: the
  // new postmaster then exits at once, and is started again.
  for (int attempt = 0;; ++attempt) {
    const Result<pid_t> pid = SpawnLogged(args, nullptr, dir_ + "/" + kLogName);
    if (!pid.ok()) return pid.status();
    pid_ = *pid;
    WriteServerOwner(dir_, pid_);
    Status up = WaitUntilUp();
    // Only a postmaster that exited at once is started again (Unavailable); one that never
    // answered (DeadlineExceeded) was waited for long enough.
    if (!absl::IsUnavailable(up) || attempt == 20) return up;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string PostgresServer::conninfo() const {
  return "host=" + dir_ + " user=" + kUser + " dbname=postgres";
}

std::string PostgresServer::url() const {
  return std::string("postgresql://") + kUser + "@/postgres?host=" + dir_;
}

Status PostgresServer::WaitUntilUp() {
  constexpr int kTries = 3000;  // 30 s in steps of 10 ms (crash recovery replays the WAL)
  const std::string info = conninfo() + " connect_timeout=1";
  for (int i = 0; i < kTries; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError("postgres exited while starting; its log ends:" +
                                    LogTail(dir_ + "/" + kLogName));
    }
    if (PQping(info.c_str()) == PQPING_OK) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (void)Signal(SIGKILL);
  return absl::DeadlineExceededError(
      "postgres did not accept connections within 30 s; its log ends:" +
      LogTail(dir_ + "/" + kLogName));
}

Status PostgresServer::Signal(int signal) {
  if (!running()) return absl::FailedPreconditionError("postgres is not running");
  const Status s = SignalServerAndWait(pid_, signal, "postgres");
  pid_ = -1;
  return s;
}

Status PostgresServer::Stop() { return Signal(SIGINT); }

Status PostgresServer::Kill() { return Signal(SIGKILL); }

Status PostgresServer::Pause() { return PauseServer(pid_, true, "postgres"); }

Status PostgresServer::Resume() { return PauseServer(pid_, false, "postgres"); }

Status PostgresServer::Restart() {
  if (running()) {
    if (Status s = Kill(); !s.ok()) return s;
  }
  return Launch();
}

}  // namespace ratelab
