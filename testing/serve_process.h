// `ratelab serve` as a process, for the tests that run it as a user does: the binary
// (RATELAB_BINARY) listening on loopback, its stderr in a file, stopped with SIGTERM.
#ifndef RATELAB_TESTING_SERVE_PROCESS_H_
#define RATELAB_TESTING_SERVE_PROCESS_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "testing/files.h"
#include "testing/process.h"

namespace ratelab {

class ServeProcess {
 public:
  // `ratelab serve --listen 127.0.0.1:0 ARGS...`, its stderr in `err`; the port it listens on
  // once it says. With `open_files`, under that limit of file descriptors (ulimit -n).
  ServeProcess(std::vector<std::string> args, const std::filesystem::path& err,
               std::optional<int> open_files = std::nullopt)
      : err_(err) {
    args.insert(args.begin(), {RATELAB_BINARY, "serve", "--listen", "127.0.0.1:0"});
    if (open_files) {
      args.insert(
          args.begin(),
          {"/bin/sh", "-c", "ulimit -n " + std::to_string(*open_files) + " && exec \"$@\"", "sh"});
    }
    pid_ = testing_process::Spawn(args, "", err.string());
    EXPECT_GT(pid_, 0) << args[0];
    const std::optional<uint16_t> port =
        testing_process::ServePort(err.string(), std::chrono::seconds(30));
    EXPECT_TRUE(port.has_value()) << testing_files::Read(err_);
    port_ = port.value_or(0);
  }
  ~ServeProcess() {
    if (pid_ > 0) Stop();
  }
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string err() const { return testing_files::Read(err_); }
  // Whether the process is still running (one that ended is reaped, its status kept for Stop).
  bool running() {
    if (pid_ <= 0 || ended_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    ended_ = status;
    return false;
  }
  // SIGTERM, then its exit status (-1 when it did not exit in 30 s, and was killed, or was
  // ended by a signal).
  int Stop() {
    int status = 0;
    if (ended_) {
      status = *ended_;
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    kill(pid_, SIGTERM);
    const auto began = std::chrono::steady_clock::now();
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() - began > std::chrono::seconds(30)) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  std::filesystem::path err_;
  pid_t pid_ = -1;
  std::optional<int> ended_;  // its wait status, once reaped by running()
  uint16_t port_ = 0;
};

}  // namespace ratelab

#endif  // RATELAB_TESTING_SERVE_PROCESS_H_
