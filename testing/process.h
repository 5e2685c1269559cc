// A program run as a child process by a test or a benchmark (the ratelab binary, nginx), and
// what it holds. Header-only.
#ifndef RATELAB_TESTING_PROCESS_H_
#define RATELAB_TESTING_PROCESS_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace ratelab::testing_process {

// Starts `args` (args[0] a path) with its stdout and stderr written to the files `out` and `err`
// (each left as the test's when empty) and the environment `env` (the test's when empty); its
// pid, or -1.
inline pid_t Spawn(std::vector<std::string> args, const std::string& out = "",
                   const std::string& err = "", std::vector<std::string> env = {}) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!out.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  if (!err.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  pid_t pid = -1;
  const int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(),
                                 env.empty() ? environ : envp.data());
  posix_spawn_file_actions_destroy(&actions);
  return failed == 0 ? pid : -1;
}

// How a program run to its end ended: its exit status (-1 when it could not start or was ended by
// a signal) and what it wrote, its stdout then its stderr.
struct Finished {
  int exit = -1;
  std::string output;
};

// Runs `args` (as Spawn, with `env`) to its end, its stdout and stderr kept in `dir`'s out.txt
// and err.txt.
inline Finished RunToEnd(std::vector<std::string> args, const std::string& dir,
                         std::vector<std::string> env = {}) {
  const std::string out = dir + "/out.txt", err = dir + "/err.txt";
  Finished f;
  const pid_t pid = Spawn(std::move(args), out, err, std::move(env));
  if (pid <= 0) return f;
  int status = 0;
  if (waitpid(pid, &status, 0) == pid && WIFEXITED(status)) f.exit = WEXITSTATUS(status);
  for (const std::string& file : {out, err}) {
    std::ifstream in(file);
    f.output.append(std::istreambuf_iterator<char>(in), {});
  }
  return f;
}

// The resident memory of process `pid` (VmRSS), in bytes; -1 when it cannot be read.
inline int64_t ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

// The port that `ratelab serve --listen 127.0.0.1:0` says it listens on, read from `err` (the file
// its stderr goes to) once it says so, waiting at most `timeout`; nothing when it did not say.
inline std::optional<uint16_t> ServePort(const std::string& err,
                                         std::chrono::milliseconds timeout) {
  const std::regex listening(R"(listening on http://127\.0\.0\.1:(\d+) )");
  const auto began = std::chrono::steady_clock::now();
  while (true) {
    std::ifstream in(err);
    const std::string said((std::istreambuf_iterator<char>(in)), {});
    std::smatch m;
    if (std::regex_search(said, m, listening)) return static_cast<uint16_t>(std::stoi(m[1].str()));
    if (std::chrono::steady_clock::now() - began >= timeout) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace ratelab::testing_process

#endif  // RATELAB_TESTING_PROCESS_H_
