// `ratelab serve` against the clients a rate limiter meets first: bytes that are not HTTP or not
// UTF-8, requests past every bound, slow clients, more connections than it has descriptors, a
// million distinct keys, and a store that stops answering. After each, the process is alive,
// /healthz answers within 100 ms, and a normal decision is right. Loopback only.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/process.h"
#include "testing/raw_connection.h"
#include "testing/redis.h"
#include "testing/serve_process.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing_raw::Connection;
using Steady = std::chrono::steady_clock;

std::string Hit(const std::string& user) {
  const std::string body = R"({"userId":")" + user + R"("})";
  return "POST /api/hit HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// The process is alive, /healthz answers within 100 ms, and a decision for a user never seen
// before is an admission of count 1.
void ExpectHealthy(ServeProcess& serve, const std::string& fresh_user) {
  ASSERT_TRUE(serve.running()) << serve.err();
  const auto start = Steady::now();
  Connection health(serve.port());
  ASSERT_TRUE(health.connected());
  ASSERT_TRUE(health.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string answer = health.ReadUntilClosed();
  EXPECT_LT(Steady::now() - start, milliseconds(100)) << fresh_user;
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200 OK")) << answer;
  Connection hit(serve.port());
  ASSERT_TRUE(hit.Send(Hit(fresh_user)));
  const std::vector<int> status = hit.ReadAnswers(1);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0], 200) << fresh_user;
}

// A value of serve's /metrics.
int64_t Metric(ServeProcess& serve, const std::string& line_start) {
  Connection c(serve.port());
  c.Send("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string text = c.ReadUntilClosed();
  const size_t at = text.find("\n" + line_start + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + line_start.size() + 2));
}

// Whether this test (and so the ratelab it runs) is built with AddressSanitizer and
// UndefinedBehaviorSanitizer (scripts/sanitize asan).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

fs::path Dir(const std::string& name) {
  const fs::path dir = testing_files::TempDir("hostile-" + name);
  fs::create_directories(dir);
  return dir;
}

// What was found by hand, each once a way to end, hang or desynchronise serve, as raw bytes on
// a connection of its own: each gets an answer (a 4xx) or a closed connection, never a crash.
TEST(HostileClient, RawRequestsThatOnceEndedServeAreAnsweredAndItGoesOn) {
  const fs::path dir = Dir("raw");
  testing_files::Write(dir, "token", "0123456789abcdef0123\n");
  fs::permissions(dir / "token", fs::perms::owner_read | fs::perms::owner_write);
  ServeProcess serve({"--admin-token-file", (dir / "token").string()}, dir / "err.txt");
  const std::string auth = "Authorization: Bearer 0123456789abcdef0123\r\n";
  const std::pair<std::string, std::string> cases[] = {
      {"GET /api/usage/%FF HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 "},
      {"GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 400 "},
      {"GET /ratelimit/auth?deny=%FF HTTP/1.1\r\nHost: x\r\nX-User-Id: a\r\n"
       "X-Original-URI: /x\r\n\r\n",
       "HTTP/1.1 400 "},
      {"GET /ratelimit/auth HTTP/1.1\r\nHost: x\r\nX-User-Id: \xff\xfe\r\n"
       "X-Original-URI: /x\r\n\r\n",
       "HTTP/1.1 400 "},
      {"GET /ratelimit/rules/\xff HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", "HTTP/1.1 400 "},
      {"GET /ratelimit/rules?scope_value=%C3 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n",
       "HTTP/1.1 400 "},
      {Hit(std::string(60'000, 'u')), "HTTP/1.1 400 "},  // a 60 KB user id
      {"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20'000, 'x') + "\r\n\r\n",
       "HTTP/1.1 431 "},
      {"POST /api/hit HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", "HTTP/1.1 413 "},
      {"HELLO \x01\x02\r\n\r\n", "HTTP/1.1 400 "},
      {std::string("GET /\0 HTTP/1.1\r\n\r\n", 20), "HTTP/1.1 400 "},
      {"POST /api/hit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       "HTTP/1.1 400 "},
  };
  int n = 0;
  for (const auto& [bytes, expected] : cases) {
    Connection c(serve.port());
    ASSERT_TRUE(c.connected());
    c.Send(bytes);
    const std::string answer = c.ReadUntilClosed(milliseconds(500));
    EXPECT_TRUE(answer.starts_with(expected)) << n << ": " << answer.substr(0, 200);
    ExpectHealthy(serve, "after-raw-" + std::to_string(n++));
  }
  // HEAD gets no body, so the answer after it on the same connection reads as its own.
  Connection c(serve.port());
  c.Send(
      "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const std::string both = c.ReadUntilClosed();
  EXPECT_TRUE(both.starts_with("HTTP/1.1 405 ")) << both;
  EXPECT_EQ(both.find("HTTP/1.1 200 OK"), both.find("\r\n\r\n") + 4) << both;
  ExpectHealthy(serve, "after-head");
}

// Slow clients hold connections open a byte at a time; others are served all the while, and
// each slow one is closed at its read timeout.
TEST(HostileClient, SlowClientsDoNotStopOthersFromBeingServed) {
  const fs::path dir = Dir("slow");
  ServeProcess serve({}, dir / "err.txt");
  std::vector<std::unique_ptr<Connection>> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(std::make_unique<Connection>(serve.port()));
    slow.back()->Send("GET /healthz HTTP/1.1\r\nHo");
  }
  for (int round = 0; round < 5; ++round) {
    for (auto& c : slow) c->Send("s");
    ExpectHealthy(serve, "beside-slow-" + std::to_string(round));
    std::this_thread::sleep_for(milliseconds(100));
  }
}

// More connections than descriptors: serve (under ulimit -n 256) keeps its open connections
// below the limit, closing the oldest idle ones for new ones, and answers throughout.
TEST(HostileClient, MoreConnectionsThanDescriptorsCloseTheOldestIdleOnes) {
  const fs::path dir = Dir("fds");
  ServeProcess serve({}, dir / "err.txt", /*open_files=*/256);
  EXPECT_NE(serve.err().find("at most "), std::string::npos) << serve.err();
  std::vector<std::unique_ptr<Connection>> idle;
  for (int i = 0; i < 400; ++i) {
    idle.push_back(std::make_unique<Connection>(serve.port()));
    ASSERT_TRUE(idle.back()->connected()) << i;
  }
  std::this_thread::sleep_for(milliseconds(300));
  ExpectHealthy(serve, "past-the-descriptors");
  EXPECT_GT(Metric(serve, R"(ratelab_connections_closed_total{reason="idle-for-room"})"), 100);
  EXPECT_LT(Metric(serve, "ratelab_connections_open"), 256);
}

// With its bound above the descriptor limit, accepting fails (EMFILE): serve waits and tries
// again, rather than stop accepting for good, and serves once descriptors are free.
TEST(HostileClient, AnAcceptThatFailsIsTriedAgain) {
  if (kSanitized) {
    // UndefinedBehaviorSanitizer's vptr check opens a pipe to see whether memory can be read;
    // with no descriptor left it cannot, and reports a valid object as broken. The release
    // build runs this test.
    GTEST_SKIP() << "no descriptor is left for the sanitizer's own checks";
  }
  const fs::path dir = Dir("emfile");
  ServeProcess serve({"--max-connections", "5000"}, dir / "err.txt", /*open_files=*/128);
  {
    std::vector<std::unique_ptr<Connection>> held;
    for (int i = 0; i < 200; ++i) held.push_back(std::make_unique<Connection>(serve.port()));
    std::this_thread::sleep_for(milliseconds(300));
  }
  // The held connections gone, descriptors come free: within the longest pause (1 s) it accepts.
  const auto start = Steady::now();
  bool answered = false;
  while (!answered && Steady::now() - start < std::chrono::seconds(5)) {
    Connection c(serve.port());
    c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    answered = c.ReadUntilClosed(milliseconds(1500)).starts_with("HTTP/1.1 200");
  }
  ASSERT_TRUE(answered);
  std::this_thread::sleep_for(milliseconds(1100));  // any pause left runs out
  ExpectHealthy(serve, "after-emfile");
  EXPECT_GT(Metric(serve, "ratelab_accept_errors_total"), 0);
  EXPECT_NE(serve.err().find("cannot accept a connection"), std::string::npos) << serve.err();
}

// A million distinct keys: the in-process counters keep to --max-keys, dropping the least
// recently used, and the process's memory stays bounded. Under a sanitizer, a quarter of a
// million against a quarter of the bound: as many drops a key, at a quarter of the time (80 s
// under AddressSanitizer for the million).
TEST(HostileClient, AMillionDistinctKeysKeepToTheBound) {
  const fs::path dir = Dir("keys");
  constexpr int kSenders = 4, kKeys = kSanitized ? 250'000 : 1'000'000, kBatch = 250;
  constexpr int kMaxKeys = kKeys / 10;
  ServeProcess serve({"--max-keys", std::to_string(kMaxKeys), "--threads", "2"}, dir / "err.txt");
  std::atomic<int64_t> admitted{0};
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([&, s] {
      Connection c(serve.port());
      for (int first = s * (kKeys / kSenders); first < (s + 1) * (kKeys / kSenders);
           first += kBatch) {
        std::string batch;
        for (int k = first; k < first + kBatch; ++k) batch += Hit("k" + std::to_string(k));
        if (!c.Send(batch)) return;
        for (const int status : c.ReadAnswers(kBatch)) admitted += status == 200;
      }
    });
  }
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(admitted.load(), kKeys) << "each key's first hit is admitted";
  const int64_t keys = Metric(serve, "ratelab_keys");
  EXPECT_GT(keys, 0);
  EXPECT_LE(keys, 64 * ((kMaxKeys + 63) / 64)) << "64 shards of ceil(--max-keys / 64)";
  // Every key past the bound was dropped: in use, or idle once its window had passed (which a
  // slow run, under a sanitizer, sees for a good share of them).
  EXPECT_GT(Metric(serve, R"(ratelab_keys_dropped_total{reason="in-use"})") +
                Metric(serve, R"(ratelab_keys_dropped_total{reason="idle"})"),
            kKeys - 2 * kMaxKeys);
  // (AddressSanitizer keeps freed memory in quarantine, 256 MB of it, and pads every block.)
  EXPECT_LT(testing_process::ResidentBytes(serve.pid()), int64_t{kSanitized ? 1200 : 400} << 20);
  ExpectHealthy(serve, "after-a-million-keys");
}

// A Redis that stops answering: each decision is answered within --store-timeout, the health
// check does not wait for the store, and once it is back a decision is right again.
TEST(HostileClient, AStalledStoreCostsEachDecisionNoMoreThanItsTimeout) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  const fs::path dir = Dir("stall");
  ServeProcess serve({"--store", redis->url(), "--store-timeout", "200ms"}, dir / "err.txt");
  ExpectHealthy(serve, "before-the-stall");
  ASSERT_TRUE(redis->Pause().ok());
  for (int i = 0; i < 3; ++i) {
    const auto start = Steady::now();
    Connection c(serve.port());
    c.Send(Hit("stalled-" + std::to_string(i)));
    EXPECT_EQ(c.ReadAnswers(1), std::vector<int>{503});
    EXPECT_LT(Steady::now() - start, milliseconds(200 + 200));
  }
  const auto start = Steady::now();
  Connection health(serve.port());
  health.Send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(health.ReadUntilClosed().starts_with("HTTP/1.1 200 OK"));
  EXPECT_LT(Steady::now() - start, milliseconds(100));
  ASSERT_TRUE(redis->Resume().ok());
  // Its first call after the stall may still fail (a connection that timed out is made again).
  for (int i = 0; i < 10; ++i) {
    Connection c(serve.port());
    c.Send(Hit("probe-" + std::to_string(i)));
    if (c.ReadAnswers(1) == std::vector<int>{200}) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ExpectHealthy(serve, "after-the-stall");
  // The store's address is the operator's to know, not the caller's.
  EXPECT_NE(serve.err().find("the store failed"), std::string::npos) << serve.err();
}

}  // namespace
}  // namespace ratelab
