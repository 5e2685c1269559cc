#include "impl/store/redis_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "impl/store/server_process.h"

extern char** environ;

namespace ratelab {

namespace {

namespace fs = std::filesystem;

constexpr char kSocketName[] = "redis.sock";
constexpr char kLogName[] = "redis.log";
constexpr char kClockName[] = "virtual-clock";
constexpr char kDirPrefix[] = "ratelab-redis-";
// Databases a private server offers: one per limiter of a scenario.
constexpr int kDatabases = 256;

// The shim preloaded into a private server to put it on virtual time: where
// RATELAB_VIRTUAL_TIME_SHIM says, else found beside the running binary, where a build tree keeps
// it (impl/, from a binary at the tree's top or in a folder of its own) or an installed package
// does (../lib/ratelab/ from /usr/bin): no path of the tree it was built in is compiled in.
std::string ShimPath() {
  if (const char* p = getenv("RATELAB_VIRTUAL_TIME_SHIM"); p != nullptr && *p != '\0') return p;
  constexpr char kShim[] = "libratelab_virtual_time.so";
  std::error_code ec;
  const fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return kShim;
  const fs::path installed = dir / ".." / "lib" / "ratelab" / kShim;
  for (const fs::path& candidate :
       {dir / kShim, dir / "impl" / kShim, dir / ".." / "impl" / kShim}) {
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
  }
  return installed.lexically_normal().string();
}

}  // namespace

Result<std::unique_ptr<VirtualClock>> VirtualClock::Create(const std::string& path, Instant start) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::InternalError("cannot create the virtual clock file " + path + ": " +
                               strerror(errno));
  }
  if (ftruncate(fd, sizeof(int64_t)) != 0) {
    const int e = errno;
    close(fd);
    return absl::InternalError("cannot size " + path + ": " + strerror(e));
  }
  void* p = mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) return absl::InternalError("cannot map " + path + ": " + strerror(errno));
  std::unique_ptr<VirtualClock> clock(new VirtualClock(path, static_cast<int64_t*>(p)));
  clock->Set(start);
  return clock;
}

VirtualClock::~VirtualClock() { munmap(now_ns_, sizeof(int64_t)); }

void VirtualClock::Set(Instant now) {
  __atomic_store_n(now_ns_, ToUnixNanos(now), __ATOMIC_RELEASE);
}

std::vector<std::string> RedisDurabilityArgs(Durability durability) {
  switch (durability) {
    case Durability::kNone:
      return {"--save", "", "--appendonly", "no"};
    case Durability::kEverySec:
      return {"--save", "", "--appendonly", "yes", "--appendfsync", "everysec"};
    case Durability::kAlways:
      return {"--save", "", "--appendonly", "yes", "--appendfsync", "always"};
  }
  return {};
}

Result<std::unique_ptr<RedisServer>> RedisServer::Start(RedisServerOptions options) {
  if (!OnPath("redis-server")) {
    return absl::NotFoundError(
        "redis-server is not on PATH (install Debian's package redis-server; scripts/test does)");
  }
  RemoveAbandonedServers(TempRoot(), kDirPrefix, "redis-server");
  Result<std::string> dir = MakeServerDir(kDirPrefix);
  if (!dir.ok()) return dir.status();
  std::unique_ptr<RedisServer> server(new RedisServer(std::move(options), *std::move(dir)));
  if (server->endpoint().unix_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError("the socket path " + server->endpoint().unix_path +
                                      " is too long for a unix socket; set TMPDIR shorter");
  }
  if (server->options_.virtual_clock) {
    Result<std::unique_ptr<VirtualClock>> clock =
        VirtualClock::Create(server->dir_ + "/" + kClockName, *server->options_.virtual_clock);
    if (!clock.ok()) return clock.status();
    server->clock_ = *std::move(clock);
    server->shim_ = ShimPath();  // found once: every launch, a restart's too, preloads it
    if (access(server->shim_.c_str(), R_OK) != 0) {
      return absl::NotFoundError("the virtual time shim " + server->shim_ +
                                 " is missing (build the target ratelab_virtual_time, or set "
                                 "RATELAB_VIRTUAL_TIME_SHIM to where it is)");
    }
  }
  if (Status s = server->Launch(); !s.ok()) return s;
  return server;
}

RedisServer::~RedisServer() {
  if (running()) (void)Signal(SIGKILL);
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

RedisEndpoint RedisServer::endpoint(int db) const {
  RedisEndpoint e;
  e.unix_path = dir_ + "/" + kSocketName;
  e.db = db;
  return e;
}

Status RedisServer::Launch() {
  if (running()) return absl::FailedPreconditionError("redis-server is already running");
  std::vector<std::string> args = {"redis-server",
                                   "--port",
                                   std::to_string(options_.port),
                                   "--bind",
                                   "127.0.0.1",
                                   "--unixsocket",
                                   endpoint().unix_path,
                                   "--unixsocketperm",
                                   "700",
                                   "--dir",
                                   dir_,
                                   "--daemonize",
                                   "no",
                                   "--databases",
                                   std::to_string(kDatabases)};
  for (std::string& a : RedisDurabilityArgs(options_.durability)) args.push_back(std::move(a));
  for (const std::string& a : options_.extra_args) args.push_back(a);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (!v.starts_with("LD_PRELOAD=") && !v.starts_with("RATELAB_VIRTUAL_CLOCK=")) {
      env_strings.emplace_back(v);
    }
  }
  if (clock_ != nullptr) {
    env_strings.push_back("LD_PRELOAD=" + shim_);
    env_strings.push_back("RATELAB_VIRTUAL_CLOCK=" + clock_->path());
  }
  const Result<pid_t> pid = SpawnLogged(std::move(args), &env_strings, dir_ + "/" + kLogName);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  WriteServerOwner(dir_, pid_);
  return WaitUntilUp();
}

Status RedisServer::WaitUntilUp() {
  constexpr int kTries = 2000;  // 10 s in steps of 5 ms
  RedisOptions quick;
  quick.connect_timeout = std::chrono::milliseconds(100);
  quick.command_timeout = std::chrono::seconds(1);
  const std::vector<std::string> ping = {"PING"};
  for (int i = 0; i < kTries; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::UnavailableError("redis-server exited while starting; its log ends:" +
                                    LogTail(dir_ + "/" + kLogName));
    }
    RedisKv probe(endpoint(), quick);
    // LOADING while it reads its append-only file: not up yet.
    if (Result<KvReply> r = probe.Execute(ping); r.ok() && !r->is_error()) return absl::OkStatus();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  (void)Signal(SIGKILL);
  return absl::UnavailableError("redis-server did not answer PING within 10 s; its log ends:" +
                                LogTail(dir_ + "/" + kLogName));
}

Status RedisServer::Signal(int signal) {
  if (!running()) return absl::FailedPreconditionError("redis-server is not running");
  const Status s = SignalServerAndWait(pid_, signal, "redis-server");
  pid_ = -1;
  return s;
}

Status RedisServer::Stop() { return Signal(SIGTERM); }

Status RedisServer::Kill() { return Signal(SIGKILL); }

Status RedisServer::Pause() { return PauseServer(pid_, true, "redis-server"); }

Status RedisServer::Resume() { return PauseServer(pid_, false, "redis-server"); }

Status RedisServer::Restart() {
  if (running()) {
    if (Status s = Kill(); !s.ok()) return s;
  }
  return Launch();
}

}  // namespace ratelab
