#include "impl/limiters/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <memory>

extern char** environ;

namespace ratelab {

namespace {

// The longest line a process may answer, and the stderr it may leave for the error.
constexpr size_t kLongestLine = 1 << 20;
constexpr size_t kStderrKept = 4096;

// Waits up to about `tries` * 10 ms for `pid` to exit: its wait status, or -1 while it runs.
// It is left to be reaped (WNOWAIT): until then its process group keeps its number, so that what
// the process left running in its group can be killed by that number, and nothing else.
int Exited(pid_t pid, int tries) {
  for (int i = 0;; ++i) {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      return -1;
    }
    if (info.si_pid == pid) {
      if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
      return (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
    }
    if (i >= tries) return -1;
    usleep(10'000);
  }
}

}  // namespace

Result<std::vector<std::string>> SplitCommandWords(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c != '\'' && c != '"') {
      word += c;
      continue;
    }
    const size_t open = i;
    for (++i; i < command.size() && command[i] != c; ++i) {
      if (c == '"' && command[i] == '\\' && i + 1 < command.size()) ++i;
      word += command[i];
    }
    if (i == command.size()) {
      return absl::InvalidArgumentError("the command '" + std::string(command) +
                                        "' has a quote it does not close (at character " +
                                        std::to_string(open + 1) + ")");
    }
  }
  if (in_word) words.push_back(std::move(word));
  if (words.empty()) return absl::InvalidArgumentError("the command to run is empty");
  return words;
}

Result<std::unique_ptr<ExecProcess>> ExecProcess::Start(const std::vector<std::string>& words,
                                                        const std::string& directory) {
  int io[2];
  int err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, io) != 0) {
    return absl::FailedPreconditionError(std::string("cannot make a socket: ") + strerror(errno));
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(io[0]);
    close(io[1]);
    return absl::FailedPreconditionError(std::string("cannot make a pipe: ") + strerror(errno));
  }
  std::vector<std::string> args = words;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, io[1], 0);
  posix_spawn_file_actions_adddup2(&actions, io[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  if (!directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, directory.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // A group of its own: the terminal's Ctrl-C reaches ratelab, which stops it.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(io[1]);
  close(err[1]);
  if (rc != 0) {
    close(io[0]);
    close(err[0]);
    return absl::FailedPreconditionError(strerror(rc));
  }
  fcntl(io[0], F_SETFL, fcntl(io[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<ExecProcess>(new ExecProcess(pid, io[0], err[0]));
}

ExecProcess::~ExecProcess() {
  shutdown(io_, SHUT_WR);  // the end of its input: it should exit
  if (status_ == -1) status_ = Exited(pid_, 100);
  // Its group, whatever it left running in it (a child it forked, a server it started), and it
  // if it did not exit: the group's number is still its own, since it is not reaped yet.
  kill(-pid_, SIGKILL);
  int reaped = 0;
  waitpid(pid_, &reaped, 0);
  if (status_ == -1) status_ = reaped;
  close(io_);
  if (err_ >= 0) close(err_);
}

void ExecProcess::Write(std::string_view line) {
  to_write_.append(line);
  to_write_ += '\n';
}

void ExecProcess::ReadStderr() {
  char buf[4096];
  for (;;) {
    const ssize_t n = read(err_, buf, sizeof buf);
    if (n > 0) {
      stderr_.append(buf, static_cast<size_t>(n));
      if (stderr_.size() > 2 * kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
      continue;
    }
    if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
      close(err_);
      err_ = -1;
    }
    return;
  }
}

Result<bool> ExecProcess::Pump(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{io_, static_cast<short>(POLLIN | (to_write_.empty() ? 0 : POLLOUT)), 0},
                   {err_, POLLIN, 0}};
  const int n = poll(fds, err_ >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n < 0 && errno == EINTR) return true;
  if (n < 0) return absl::FailedPreconditionError(std::string("poll: ") + strerror(errno));
  if (n == 0) return false;
  if (err_ >= 0 && fds[1].revents != 0) ReadStderr();
  if ((fds[0].revents & POLLOUT) != 0) {
    const ssize_t w = send(io_, to_write_.data(), to_write_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) to_write_.erase(0, static_cast<size_t>(w));
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
      return absl::FailedPreconditionError("stopped reading its input (" +
                                           std::string(strerror(errno)) + ")");
    }
  }
  if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    char buf[65536];
    for (;;) {
      const ssize_t r = read(io_, buf, sizeof buf);
      if (r > 0) {
        read_.append(buf, static_cast<size_t>(r));
        if (read_.size() - taken_ > kLongestLine) break;
        continue;
      }
      if (r == 0 || (errno != EAGAIN && errno != EINTR)) out_closed_ = true;
      break;
    }
  }
  return true;
}

Status ExecProcess::Flush() {
  while (!to_write_.empty()) {
    if (out_closed_) return absl::FailedPreconditionError("closed its output");
    Result<bool> pumped = Pump(std::chrono::seconds(10));
    if (!pumped.ok()) return pumped.status();
    if (!*pumped) return absl::FailedPreconditionError("read nothing of its input for 10 s");
  }
  return absl::OkStatus();
}

Result<std::string> ExecProcess::ReadLine(std::chrono::milliseconds timeout) {
  for (;;) {
    const size_t end = read_.find('\n', taken_);
    if (end != std::string::npos) {
      std::string line = read_.substr(taken_, end - taken_);
      taken_ = end + 1;
      if (taken_ == read_.size() || taken_ > kLongestLine) {
        read_.erase(0, taken_);
        taken_ = 0;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      return line;
    }
    if (read_.size() - taken_ > kLongestLine) {
      return absl::FailedPreconditionError("answered a line longer than 1 MiB");
    }
    if (out_closed_) return absl::FailedPreconditionError("closed its output");
    Result<bool> pumped = Pump(timeout);
    if (!pumped.ok()) return pumped.status();
    if (!*pumped) {
      return absl::FailedPreconditionError("answered nothing for " +
                                           std::to_string(timeout.count()) + " ms");
    }
  }
}

std::string ExecProcess::Fate() {
  if (err_ >= 0) ReadStderr();
  if (status_ == -1) status_ = Exited(pid_, out_closed_ ? 100 : 0);
  if (status_ == -1) return "is running";
  if (WIFEXITED(status_)) return "exited with status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) {
    return "was killed by signal " + std::to_string(WTERMSIG(status_)) + " (" +
           strsignal(WTERMSIG(status_)) + ")";
  }
  return "stopped";
}

std::string ExecProcess::StderrTail() const {
  std::deque<std::string_view> lines;
  std::string_view rest = stderr_;
  if (rest.size() > kStderrKept) rest.remove_prefix(rest.size() - kStderrKept);
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (!line.empty()) lines.push_back(line);
    if (lines.size() > 8) lines.pop_front();
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
  std::string out;
  for (std::string_view l : lines) {
    out += "\n  ";
    // Control characters (a terminal's escapes among them) are shown as '?'.
    for (const char c : l) out += (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f ? '?' : c;
  }
  return out;
}

}  // namespace ratelab
