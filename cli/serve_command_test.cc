// `ratelab serve`, as a user runs it: the binary listening on loopback, answering seed 001's and
// seed 003's APIs over HTTP, and stopping gracefully on SIGTERM.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/http_client.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
namespace http = testing_http::http;

TEST(ServeCommand, ServesTheSeedsApisOverHttpAndStopsOnSigterm) {
  const fs::path dir = testing_files::TempDir("serve");
  const fs::path err = dir / "err.txt";
  testing_files::Write(dir, "rules.yaml",
                       "rules:\n  - {scope_type: user, endpoint: /api/hit, algorithm: "
                       "fixed-window, max_requests: 2, window_seconds: 3600}\n");
  std::vector<std::string> args = {RATELAB_BINARY, "serve",   "--listen",
                                   "127.0.0.1:0",  "--rules", (dir / "rules.yaml").string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  const auto began = std::chrono::steady_clock::now();
  const auto waited = [&] { return std::chrono::steady_clock::now() - began; };
  const std::regex listening(
      R"(listening on http://127\.0\.0\.1:(\d+), deciding in process by the rules of .*rules\.yaml \(1\))");
  std::smatch m;
  std::string text;
  while (!std::regex_search(text = testing_files::Read(err), m, listening) &&
         waited() < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(std::regex_search(text, m, listening)) << text;
  const uint16_t port = static_cast<uint16_t>(std::stoi(m[1].str()));
  {
    testing_http::Client c(port);
    EXPECT_EQ(c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})").result_int(), 200);
    EXPECT_EQ(c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})").result_int(), 200);
    const testing_http::Response third = c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})");
    EXPECT_EQ(third.result_int(), 429);
    EXPECT_EQ(third.body(), R"({"error":"Rate limit exceeded","limit":2})");
    const testing_http::Response free =
        c.Send(http::verb::post, "/ratelimit/check", R"({"user_id": "a", "endpoint": "/x"})");
    EXPECT_EQ(free.result_int(), 200);
    EXPECT_TRUE(free.body().starts_with(R"({"allowed":true,"remaining":0,"limit":0,"reset":)"))
        << free.body();
    EXPECT_EQ(free.count("X-RateLimit-Limit"), 0u) << "no rule limits /x";
    EXPECT_EQ(c.Send(http::verb::get, "/healthz").result_int(), 200);
  }
  kill(pid, SIGTERM);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0 && waited() < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(WIFEXITED(status)) << testing_files::Read(err);
  EXPECT_EQ(WEXITSTATUS(status), kExitOk);
  EXPECT_NE(testing_files::Read(err).find("stopped after answering 5 requests"), std::string::npos)
      << testing_files::Read(err);
}

TEST(ServeCommand, BadOptionsAreRefusedBeforeListening) {
  CliOutcome r = Ratelab({"serve", "--listen", "localhost"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--listen: 'localhost' has no port (expected HOST:PORT, as "
                       "127.0.0.1:8080)"),
            std::string::npos)
      << r.err;
  r = Ratelab({"serve", "--listen", "127.0.0.1:99999"});
  EXPECT_NE(r.err.find("has no port from 0 to 65535"), std::string::npos) << r.err;
  r = Ratelab({"serve", "--max-body", "0"});
  EXPECT_NE(r.err.find("--max-body: '0' is not a byte count"), std::string::npos) << r.err;
  r = Ratelab({"serve", "--rules", "/nonexistent/rules.yaml"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "ratelab serve: /nonexistent/rules.yaml: cannot open the rules file\n");
}

}  // namespace
}  // namespace ratelab
