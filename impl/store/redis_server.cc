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
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace ratelab {

namespace {

namespace fs = std::filesystem;

constexpr char kSocketName[] = "redis.sock";
constexpr char kLogName[] = "redis.log";
constexpr char kClockName[] = "virtual-clock";
// "<ratelab's pid> <redis-server's pid>": who to ask whether the dir is still in use.
constexpr char kOwnerName[] = "owner";
constexpr char kDirPrefix[] = "ratelab-redis-";

std::string TempRoot() {
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Whether process `pid` exists (a zombie counts).
bool Alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

// Whether process `pid` is a redis-server working in `dir`.
bool ServesIn(pid_t pid, const std::string& dir) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find("redis-server") != std::string::npos &&
         cmdline.find(dir) != std::string::npos;
}
// Databases a private server offers: one per limiter of a scenario.
constexpr int kDatabases = 256;

std::string ShimPath() {
  if (const char* p = getenv("RATELAB_VIRTUAL_TIME_SHIM"); p != nullptr && *p != '\0') return p;
  return RATELAB_VIRTUAL_TIME_SHIM_PATH;
}

std::string LogTail(const std::string& path) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > 8) lines.pop_front();
  }
  std::string out;
  for (const std::string& l : lines) out += "\n  " + l;
  return out;
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

bool OnPath(const std::string& program) {
  const char* path = getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

Result<std::unique_ptr<RedisServer>> RedisServer::Start(RedisServerOptions options) {
  if (!OnPath("redis-server")) {
    return absl::NotFoundError(
        "redis-server is not on PATH (install Debian's package redis-server; scripts/test does)");
  }
  RemoveAbandonedServers(TempRoot());
  std::string dir_template = TempRoot() + "/" + kDirPrefix + "XXXXXX";
  if (mkdtemp(dir_template.data()) == nullptr) {
    return absl::InternalError("cannot make a temp dir " + dir_template + ": " + strerror(errno));
  }
  std::unique_ptr<RedisServer> server(new RedisServer(std::move(options), dir_template));
  if (server->endpoint().unix_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError("the socket path " + server->endpoint().unix_path +
                                      " is too long for a unix socket; set TMPDIR shorter");
  }
  if (server->options_.virtual_clock) {
    Result<std::unique_ptr<VirtualClock>> clock =
        VirtualClock::Create(server->dir_ + "/" + kClockName, *server->options_.virtual_clock);
    if (!clock.ok()) return clock.status();
    server->clock_ = *std::move(clock);
    if (access(ShimPath().c_str(), R_OK) != 0) {
      return absl::NotFoundError("the virtual time shim " + ShimPath() +
                                 " is missing (build the target ratelab_virtual_time)");
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
    env_strings.push_back("LD_PRELOAD=" + ShimPath());
    env_strings.push_back("RATELAB_VIRTUAL_CLOCK=" + clock_->path());
  }
  const Result<pid_t> pid = SpawnLogged(std::move(args), &env_strings, dir_ + "/" + kLogName);
  if (!pid.ok()) return pid.status();
  pid_ = *pid;
  std::ofstream(dir_ + "/" + kOwnerName) << getpid() << " " << pid_ << "\n";
  return WaitUntilUp();
}

int RemoveAbandonedServers(const std::string& root) {
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string dir = entry.path().string();
    if (!entry.path().filename().string().starts_with(kDirPrefix)) continue;
    std::ifstream owner(dir + "/" + kOwnerName);
    pid_t ratelab = 0, server = 0;
    if (!(owner >> ratelab >> server) || Alive(ratelab)) continue;
    if (Alive(server) && ServesIn(server, dir)) kill(server, SIGKILL);
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    ++removed;
  }
  return removed;
}

Result<pid_t> SpawnLogged(std::vector<std::string> args, const std::vector<std::string>* env,
                          const std::string& log) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_copy;
  std::vector<char*> envp;
  if (env != nullptr) {
    env_copy = *env;
    for (std::string& e : env_copy) envp.push_back(e.data());
    envp.push_back(nullptr);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // A process group of its own: the terminal's Ctrl-C reaches ratelab, which stops its servers
  // itself once it has summarised what it measured, not the servers under it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(),
                              env != nullptr ? envp.data() : environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::UnavailableError("cannot run " + args[0] + ": " + strerror(rc));
  return pid;
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
  if (kill(pid_, signal) != 0 && errno != ESRCH) {
    return absl::InternalError(std::string("cannot signal redis-server: ") + strerror(errno));
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return absl::OkStatus();
}

Status RedisServer::Stop() { return Signal(SIGTERM); }

Status RedisServer::Kill() { return Signal(SIGKILL); }

Status RedisServer::Restart() {
  if (running()) {
    if (Status s = Kill(); !s.ok()) return s;
  }
  return Launch();
}

}  // namespace ratelab
