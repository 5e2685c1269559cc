// `ratelab serve`, as a user runs it: the binary listening on loopback, answering the hit-counter
// API's and the limit service's APIs over HTTP, and stopping gracefully on SIGTERM.
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
#include "testing/postgres.h"
#include "testing/process.h"
#include "testing/redis.h"
#include "testing/serve_process.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
namespace http = testing_http::http;

// A store that does not answer at start is said at start, and /readyz answers 503 until it does;
// /healthz, liveness, answers 200.
TEST(ServeCommand, AStoreThatDoesNotAnswerIsSaidAtStartAndMakesItNotReady) {
  const fs::path dir = testing_files::TempDir("serve-no-store");
  fs::create_directories(dir);
  ServeProcess serve({"--store", "redis://127.0.0.1:1"}, dir / "err.txt");
  EXPECT_NE(serve.err().find("ratelab serve: warning: the store does not answer (cannot connect "
                             "to Redis at redis://127.0.0.1:1"),
            std::string::npos)
      << serve.err();
  testing_http::Client c(serve.port());
  const testing_http::Response ready = c.Send(http::verb::get, "/readyz", "");
  EXPECT_EQ(ready.result_int(), 503);
  EXPECT_NE(ready.body().find("the store's last call failed"), std::string::npos) << ready.body();
  EXPECT_EQ(ready.body().find("127.0.0.1:1"), std::string::npos) << "no address to the caller";
  EXPECT_EQ(c.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

TEST(ServeCommand, ServesTheSeedsApisOverHttpAndStopsOnSigterm) {
  const fs::path dir = testing_files::TempDir("serve");
  testing_files::Write(dir, "rules.yaml",
                       "rules:\n  - {scope_type: user, endpoint: /api/hit, algorithm: "
                       "fixed-window, max_requests: 2, window_seconds: 3600}\n");
  ServeProcess serve({"--rules", (dir / "rules.yaml").string()}, dir / "err.txt");
  EXPECT_NE(
      serve.err().find("deciding in process by the rules of " + (dir / "rules.yaml").string() +
                       " (1); on a store failure: error; the admin API is off"),
      std::string::npos)
      << serve.err();
  {
    testing_http::Client c(serve.port());
    EXPECT_EQ(c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})").result_int(), 200);
    EXPECT_EQ(c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})").result_int(), 200);
    const testing_http::Response third = c.Send(http::verb::post, "/api/hit", R"({"userId": "a"})");
    EXPECT_EQ(third.result_int(), 429);
    EXPECT_EQ(third.body(), R"({"error":"Rate limit exceeded","limit":2})");
    const testing_http::Response free =
        c.Send(http::verb::post, "/ratelimit/check", R"({"user_id": "a", "endpoint": "/x"})");
    EXPECT_EQ(free.result_int(), 200);
    // No rule matches /x: not limited, and it says so (never "limit 0", which reads as blocked).
    EXPECT_EQ(free.body(),
              R"({"allowed":true,"limited":false,"reason":"no rule matches this request: it is )"
              R"(not limited"})");
    EXPECT_EQ(free[std::string("X-RateLimit-Rule")], "none");
    EXPECT_EQ(free.count("X-RateLimit-Limit"), 0u) << "no rule limits /x";
    EXPECT_EQ(c.Send(http::verb::get, "/healthz").result_int(), 200);
  }
  EXPECT_EQ(serve.Stop(), kExitOk);
  EXPECT_NE(serve.err().find("stopped after answering 5 requests"), std::string::npos)
      << serve.err();
}

TEST(ServeCommand, ARuleMadeThroughOneServersAdminApiIsEnforcedByAnother) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  const fs::path dir = testing_files::TempDir("serve-pg");
  testing_files::Write(dir, "token", "  t0ken\n");
  ServeProcess a({"--rules", server->url(), "--admin-token-file", (dir / "token").string()},
                 dir / "a.txt");
  ServeProcess b({"--rules", server->url()}, dir / "b.txt");
  EXPECT_NE(a.err().find("followed (0); on a store failure: error; the admin API is on"),
            std::string::npos)
      << a.err();

  testing_http::Client admin(a.port()), decide(b.port());
  const std::string ask = R"({"user_id": "u", "endpoint": "/pay"})";
  EXPECT_EQ(decide.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 200)
      << "no rule yet";
  auto made = [&] {
    http::request<http::string_body> request(http::verb::post, "/ratelimit/rules", 11);
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::authorization, "Bearer t0ken");
    request.body() = R"({"scope_type": "user", "endpoint": "/pay", "algorithm": "token-bucket",
                         "max_requests": 1, "window_seconds": 3600, "burst_size": 2})";
    request.prepare_payload();
    http::write(admin.stream, request);
    testing_http::Response response;
    http::read(admin.stream, admin.buffer, response);
    return response;
  }();
  ASSERT_EQ(made.result_int(), 201) << made.body();
  // B hears of it through NOTIFY: within a few seconds, a bucket of 2 for u on /pay.
  const auto began = std::chrono::steady_clock::now();
  testing_http::Response r;
  while ((r = decide.Send(http::verb::post, "/ratelimit/check", ask)).count("X-RateLimit-Limit") ==
             0 &&
         std::chrono::steady_clock::now() - began < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(r["X-RateLimit-Limit"], "2") << r.body();
  EXPECT_EQ(decide.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 200);
  EXPECT_EQ(decide.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 429);
  EXPECT_EQ(decide.Send(http::verb::get, "/ratelimit/rules").result_int(), 404)
      << "B has no admin token: its admin API is off";
  EXPECT_EQ(a.Stop(), kExitOk);
  EXPECT_EQ(b.Stop(), kExitOk);
}

// A port free now on loopback.
uint16_t FreePort() {
  testing_http::net::io_context ioc;
  testing_http::net::ip::tcp::acceptor a(ioc,
                                         {testing_http::net::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

TEST(ServeCommand, NginxInFrontAsksItBeforeEachRequestWithTheConfigInTheDocs) {
  const fs::path nginx = "/usr/sbin/nginx";
  if (!fs::exists(nginx)) {
    if (std::getenv("CI") != nullptr) FAIL() << "nginx is missing (Debian's nginx-light)";
    GTEST_SKIP() << "nginx is missing (Debian's nginx-light)";
  }
  const fs::path dir = testing_files::TempDir("serve-nginx");
  testing_files::Write(dir, "rules.yaml",
                       "rules:\n  - {scope_type: ip, endpoint: /api/orders, algorithm: "
                       "fixed-window, max_requests: 3, window_seconds: 3600}\n");
  ServeProcess serve({"--rules", (dir / "rules.yaml").string()}, dir / "serve.txt");
  const uint16_t listen = FreePort(), app = FreePort();
  std::string conf = testing_files::Read(fs::path(RATELAB_SOURCE_DIR) / "docs/nginx-ratelab.conf");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"@DIR@", dir.string()},
                                 {"@LISTEN@", "127.0.0.1:" + std::to_string(listen)},
                                 {"@RATELAB@", "127.0.0.1:" + std::to_string(serve.port())},
                                 {"@APP@", "127.0.0.1:" + std::to_string(app)}}) {
    for (size_t at; (at = conf.find(from)) != std::string::npos;) conf.replace(at, from.size(), to);
  }
  testing_files::Write(dir, "nginx.conf", conf);
  std::vector<std::string> args = {
      nginx.string(), "-c", (dir / "nginx.conf").string(), "-p", dir.string(), "-g", "daemon off;"};
  if (geteuid() == 0) args.back() += " user root;";  // its workers read the temp dir
  const pid_t pid = testing_process::Spawn(args);
  ASSERT_GT(pid, 0);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      kill(pid, SIGQUIT);
      waitpid(pid, nullptr, 0);
    }
  } reaper{pid};
  // Connected once nginx listens.
  std::unique_ptr<testing_http::Client> client;
  for (int i = 0; i < 200 && client == nullptr; ++i) {
    try {
      client = std::make_unique<testing_http::Client>(listen);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
  }
  ASSERT_NE(client, nullptr) << testing_files::Read(dir / "error.log");
  // Each request with identity headers of its own choosing, as a client that rotates them sends.
  int sent = 0;
  const auto get = [&](const std::string& path) {
    http::request<http::string_body> request(http::verb::get, path, 11);
    request.set(http::field::host, "127.0.0.1");
    ++sent;
    request.set("X-User-Id", "user-" + std::to_string(sent));
    request.set("X-Api-Key", "key-" + std::to_string(sent));
    request.set("X-Original-URI", "/elsewhere-" + std::to_string(sent));
    http::write(client->stream, request);
    testing_http::Response response;
    http::read(client->stream, client->buffer, response);
    return response;
  };
  for (int i = 0; i < 3; ++i) {
    const testing_http::Response r = get("/api/orders?page=" + std::to_string(i));
    EXPECT_EQ(r.result_int(), 200) << testing_files::Read(dir / "error.log");
    EXPECT_EQ(r.body(), "the app\n");
    EXPECT_EQ(r["X-RateLimit-Remaining"], std::to_string(2 - i));
  }
  const testing_http::Response denied = get("/api/orders");
  EXPECT_EQ(denied.result_int(), 429);
  EXPECT_EQ(denied.body(), "{\"error\":\"Too Many Requests\"}\n");
  EXPECT_EQ(denied["X-RateLimit-Limit"], "3");
  EXPECT_FALSE(denied["Retry-After"].empty());
  EXPECT_GT(std::stoll(std::string(denied["Retry-After"])), 0);
  // Other spellings of the path, each sent on with the client's own identity headers: the app
  // behind routes each to the same handler, and none escapes the address's limit.
  for (const std::string path : {"/api/orders", "/api/orders#1", "/api/orders;x", "/api/orders%20",
                                 "/api//orders/", "/api/%6Frders", "/api/x/../orders"}) {
    EXPECT_EQ(get(path).result_int(), 429) << path;
  }
  const testing_http::Response other = get("/static/logo.png");
  EXPECT_EQ(other.result_int(), 200) << "no rule for /static";
  EXPECT_EQ(other.count("X-RateLimit-Limit"), 0u);
}

// What each failure policy answers while the Redis that holds the counters is down.
TEST(ServeCommand, OnRedisEachFailurePolicyAnswersWhileTheStoreIsDown) {
  const fs::path dir = testing_files::TempDir("serve-redis");
  testing_files::Write(dir, "rules.yaml",
                       "rules:\n  - {scope_type: user, endpoint: /pay, algorithm: token-bucket, "
                       "max_requests: 1, window_seconds: 3600, burst_size: 2}\n");
  const std::string ask = R"({"user_id": "u", "endpoint": "/pay"})";
  struct Case {
    std::string policy;
    int status_while_down;
  };
  for (const Case& c :
       {Case{"error", 503}, Case{"open", 200}, Case{"closed", 429}, Case{"breaker", 200}}) {
    SCOPED_TRACE(c.policy);
    RATELAB_START_REDIS(redis, RedisServerOptions{});
    ServeProcess serve({"--rules", (dir / "rules.yaml").string(), "--store", redis->url(),
                        "--on-store-failure", c.policy, "--store-timeout", "200ms"},
                       dir / ("serve-" + c.policy + ".txt"));
    testing_http::Client client(serve.port());
    EXPECT_EQ(client.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 200);
    EXPECT_EQ(client.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 200);
    EXPECT_EQ(client.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 429)
        << "a bucket of 2 on Redis";
    ASSERT_TRUE(redis->Kill().ok());
    for (int i = 0; i < 6; ++i) {
      const testing_http::Response r = client.Send(http::verb::post, "/ratelimit/check", ask);
      EXPECT_EQ(r.result_int(), c.status_while_down) << r.body();
      if (c.policy == "closed") {
        EXPECT_EQ(r["Retry-After"], "1");
      }
    }
    const std::string health = client.Send(http::verb::get, "/healthz").body();
    const std::string metrics = client.Send(http::verb::get, "/metrics").body();
    if (c.policy == "breaker") {
      EXPECT_EQ(health, R"({"status":"ok","breaker":"open"})") << "5 failures in a row";
      EXPECT_NE(metrics.find("ratelab_breaker_state{state=\"open\"} 1\n"), std::string::npos);
      EXPECT_NE(metrics.find("ratelab_decisions_total{outcome=\"degraded-allowed\",rule=\"\"} 6\n"),
                std::string::npos)
          << metrics;
      EXPECT_NE(metrics.find("ratelab_store_failures_total{kind=\"error\"} 5\n"), std::string::npos)
          << "the sixth never reached the store: " << metrics;
    } else {
      EXPECT_EQ(health, R"({"status":"ok"})");
    }
    ASSERT_TRUE(redis->Restart().ok());
    if (c.policy != "breaker") {
      // Its store back (empty: the kill lost the bucket), the limit holds again.
      EXPECT_EQ(client.Send(http::verb::post, "/ratelimit/check", ask).result_int(), 200);
    }
    EXPECT_EQ(serve.Stop(), kExitOk) << serve.err();
  }
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
  for (const char* threads : {"0", "257", "two"}) {
    r = Ratelab({"serve", "--threads", threads});
    EXPECT_EQ(r.exit, kExitBadInput);
    EXPECT_NE(r.err.find("--threads: '" + std::string(threads) + "' is not a count from 1 to 256"),
              std::string::npos)
        << r.err;
  }
  for (const char* connections : {"0", "65"}) {
    r = Ratelab({"serve", "--store-connections", connections});
    EXPECT_EQ(r.exit, kExitBadInput);
    EXPECT_NE(r.err.find("--store-connections: '" + std::string(connections) +
                         "' is not a count from 1 to 64"),
              std::string::npos)
        << r.err;
  }
  const std::pair<std::vector<std::string>, std::string> protocols[] = {
      {{"--protocol", "kv-token-bucket-lua"},
       "--protocol chooses a protocol on Redis or PostgreSQL: give --store too"},
      {{"--store", "redis", "--protocol", "memory-token-bucket"},
       "'memory-token-bucket' is not a protocol on Redis or PostgreSQL"},
      {{"--store", "redis", "--protocol", "sql-token-bucket"},
       "'sql-token-bucket' runs on PostgreSQL, and the counters are not"},
      {{"--store", "redis", "--protocol", "kv-token-bucket-lua", "--protocol",
        "kv-token-bucket-hgetall-hset"},
       "are both token-bucket: choose one"},
  };
  for (const auto& [flags, message] : protocols) {
    std::vector<std::string> args = {"serve"};
    args.insert(args.end(), flags.begin(), flags.end());
    r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  r = Ratelab({"serve", "--on-store-failure", "maybe"});
  EXPECT_NE(r.err.find("--on-store-failure: 'maybe' is not error, open, closed or breaker"),
            std::string::npos)
      << r.err;
  r = Ratelab({"serve", "--rules", "/nonexistent/rules.yaml"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "ratelab serve: /nonexistent/rules.yaml: cannot open the rules file\n");
  for (const char* flag : {"--max-connections", "--max-key-bytes"}) {
    r = Ratelab({"serve", flag, "0"});
    EXPECT_EQ(r.exit, kExitBadInput);
    EXPECT_NE(r.err.find(std::string(flag) + ": '0' is not a count from 1"), std::string::npos)
        << r.err;
  }
  r = Ratelab({"serve", "--max-keys", "-1"});
  EXPECT_NE(r.err.find("--max-keys: '-1' is not a count from 0 up"), std::string::npos) << r.err;
  r = Ratelab({"serve", "--endpoint-case", "upper"});
  EXPECT_NE(r.err.find("--endpoint-case: 'upper' is not sensitive or insensitive"),
            std::string::npos)
      << r.err;
  r = Ratelab({"serve", "--trailing-slash", "drop"});
  EXPECT_NE(r.err.find("--trailing-slash: 'drop' is not ignore or keep"), std::string::npos)
      << r.err;
}

// A token no header can carry is refused; one that is easy to take or to guess is warned of.
TEST(ServeCommand, AnAdminTokenFileIsReadWithCare) {
  const fs::path dir = testing_files::TempDir("serve-token");
  testing_files::Write(dir, "two-lines", "first\nsecond\n");
  CliOutcome r = Ratelab({"serve", "--admin-token-file", (dir / "two-lines").string()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("two-lines: the admin token file holds more than one line"),
            std::string::npos)
      << r.err;
  r = Ratelab({"serve", "--admin-token-file", "/dev/zero"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("/dev/zero: the admin token file is a device, not a regular file"),
            std::string::npos)
      << r.err;
  testing_files::Write(dir, "short", "x\n");
  fs::permissions(dir / "short", fs::perms::owner_read | fs::perms::owner_write |
                                     fs::perms::group_read | fs::perms::others_read);
  {
    ServeProcess serve({"--admin-token-file", (dir / "short").string()}, dir / "err.txt");
    EXPECT_NE(serve.err().find("short may be read by other users (chmod 600 it)"),
              std::string::npos)
        << serve.err();
    EXPECT_NE(serve.err().find("the admin token is 1 character long"), std::string::npos)
        << serve.err();
  }
  testing_files::Write(dir, "good", "0123456789abcdef0123\n");
  fs::permissions(dir / "good", fs::perms::owner_read | fs::perms::owner_write);
  ServeProcess serve({"--admin-token-file", (dir / "good").string()}, dir / "err-good.txt");
  EXPECT_EQ(serve.err().find("warning"), std::string::npos) << serve.err();
}

}  // namespace
}  // namespace ratelab
