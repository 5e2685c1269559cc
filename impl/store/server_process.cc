#include "impl/store/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

extern char** environ;

namespace ratelab {

namespace {

namespace fs = std::filesystem;

// "<ratelab's pid> <the server's pid>": who to ask whether the dir is still in use.
constexpr char kOwnerName[] = "owner";

// Whether process `pid` is a `program` working in `dir`.
bool ServesIn(pid_t pid, std::string_view program, const std::string& dir) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return cmdline.find(program) != std::string::npos && cmdline.find(dir) != std::string::npos;
}

}  // namespace

std::string TempRoot() {
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

bool ProcessAlive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

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

bool OnPath(const std::string& program) {
  const char* path = getenv("PATH");
  if (path == nullptr) return false;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

Result<std::string> MakeServerDir(std::string_view prefix) {
  std::string dir = TempRoot() + "/" + std::string(prefix) + "XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    return absl::InternalError("cannot make a temp dir " + dir + ": " + strerror(errno));
  }
  return dir;
}

void WriteServerOwner(const std::string& dir, pid_t server) {
  std::ofstream(dir + "/" + kOwnerName) << getpid() << " " << server << "\n";
}

int RemoveAbandonedServers(const std::string& root, std::string_view prefix,
                           std::string_view program) {
  int removed = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, ec)) {
    const std::string dir = entry.path().string();
    if (!entry.path().filename().string().starts_with(prefix)) continue;
    std::ifstream owner(dir + "/" + kOwnerName);
    pid_t ratelab = 0, server = 0;
    if (!(owner >> ratelab >> server) || ProcessAlive(ratelab)) continue;
    if (ProcessAlive(server) && ServesIn(server, program, dir)) {
      kill(-server, SIGKILL);
      kill(server, SIGKILL);
    }
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

namespace {

// The processes descended from `pid` (PostgreSQL's backends each lead a process group of their
// own, so the server's group is not all of them), read from /proc.
std::vector<pid_t> Descendants(pid_t pid) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;  // (pid, its parent)
  std::error_code ec;
  for (const std::filesystem::directory_entry& e :
       std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses; it ends at the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    std::string state;
    pid_t parent = 0;
    if (rest >> state >> parent) parent_of.emplace_back(std::stoi(name), parent);
  }
  std::vector<pid_t> out = {pid};
  for (size_t i = 0; i < out.size(); ++i) {
    for (const auto& [child, parent] : parent_of) {
      if (parent == out[i]) out.push_back(child);
    }
  }
  out.erase(out.begin());
  return out;
}

}  // namespace

Status PauseServer(pid_t pid, bool pause, std::string_view program) {
  if (pid <= 0) return absl::FailedPreconditionError(std::string(program) + " is not running");
  const int signal = pause ? SIGSTOP : SIGCONT;
  if (kill(-pid, signal) != 0) {
    return absl::InternalError("cannot " + std::string(pause ? "pause " : "resume ") +
                               std::string(program) + ": " + strerror(errno));
  }
  for (const pid_t p : Descendants(pid)) kill(p, signal);
  return absl::OkStatus();
}

Status SignalServerAndWait(pid_t pid, int signal, std::string_view program) {
  // SIGKILL reaches the whole group at once (a crash of the server and all its processes); a
  // polite signal goes to the server alone, which stops its own processes.
  const pid_t target = signal == SIGKILL ? -pid : pid;
  if (kill(target, signal) != 0 && errno != ESRCH) {
    return absl::InternalError("cannot signal " + std::string(program) + ": " + strerror(errno));
  }
  // A paused server (PauseServer) must run to act on a polite signal.
  if (signal != SIGKILL) kill(-pid, SIGCONT);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return absl::OkStatus();
}

}  // namespace ratelab
