// RateLimitServer: `ratelab serve` put together, over real HTTP on loopback, on a clock that
// stays in the middle of a minute. Its threads share the counters; counters in Redis or
// PostgreSQL outlive the server.
#include "impl/service/serve.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "impl/service/service.h"
#include "testing/http_client.h"
#include "testing/postgres.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

namespace http = boost::beast::http;
using testing_http::Client;

// A server running on a thread of the test's, stopped at the end.
class Running {
 public:
  Running(ServeConfig config, const Clock& clock) {
    config.http.port = 0;
    Result<std::unique_ptr<RateLimitServer>> started = RateLimitServer::Start(config, clock);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return;
    server_ = *std::move(started);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Running() {
    if (server_ == nullptr) return;
    server_->Stop();
    thread_.join();
  }
  bool ok() const { return server_ != nullptr; }
  uint16_t port() const { return server_->port(); }
  const RateLimitServer& server() const { return *server_; }

 private:
  std::unique_ptr<RateLimitServer> server_;
  std::thread thread_;
};

// The hit-counter API's hit for `user`: its status and the count it reports (0 on a 429).
std::pair<int, int64_t> Hit(Client& c, const std::string& user) {
  const auto answer = c.Send(http::verb::post, "/api/hit", R"({"userId": ")" + user + R"("})");
  const nlohmann::json body = nlohmann::json::parse(answer.body(), nullptr, false);
  return {answer.result_int(), body.contains("count") ? body["count"].get<int64_t>() : 0};
}

const ManualClock kMidMinute(FromUnixNanos(int64_t{1'767'225'630} * 1'000'000'000));

// The hit-counter API's own test: ten parallel hits of one user, five ok and five rejected; and the
// metrics count them all.
void TenParallelHitsFiveOk(const Running& s) {
  std::vector<int> statuses(10);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < statuses.size(); ++i) {
    clients.emplace_back([&, i] {
      Client c(s.port());
      statuses[i] = Hit(c, "user_1").first;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200), 5);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 429), 5);
  Client c(s.port());
  const std::string metrics = c.Send(http::verb::get, "/metrics").body();
  EXPECT_NE(metrics.find(R"(ratelab_decisions_total{outcome="allowed",rule=")"), std::string::npos);
  EXPECT_NE(metrics.find("ratelab_request_duration_seconds_count 10\n"), std::string::npos)
      << metrics;
}

TEST(RateLimitServer, ThreadsShareTheCountersTenParallelHitsFiveOk) {
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.threads = 4;
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s.server().Banner().find("(4 threads), deciding in process by the default rules (2)"),
            std::string::npos)
      << s.server().Banner();
  TenParallelHitsFiveOk(s);  // one set of counters and metrics for every thread
}

// On Redis, one thread sends the decisions of the requests it read together in one pipeline
// (RedisPipeline): each still gets its own count.
TEST(RateLimitServer, OnRedisParallelHitsPipelinedAreEachCountedOnce) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = StoreName{StoreName::Kind::kUrl, redis->url()};
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  TenParallelHitsFiveOk(s);
}

// On PostgreSQL, one thread decides the requests it read together on several connections at
// once (PostgresPool): the upsert still counts each once.
TEST(RateLimitServer, OnPostgresParallelHitsOnSeveralConnectionsAreEachCountedOnce) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = StoreName{StoreName::Kind::kPostgresUrl, postgres->url()};
  config.store_connections = 3;
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  TenParallelHitsFiveOk(s);
}

// The hit-counter API's usage of `user`: the count it reports.
int64_t Usage(Client& c, const std::string& user) {
  const auto answer = c.Send(http::verb::get, "/api/usage/" + user);
  EXPECT_EQ(answer.result_int(), 200) << answer.body();
  const nlohmann::json body = nlohmann::json::parse(answer.body(), nullptr, false);
  return body.contains("count") ? body["count"].get<int64_t>() : -1;
}

// Three hits, a new server on the same store, and the count goes on: 4, 5, then a 429. The
// usage read in between spends nothing.
void CountsOutliveTheServer(const StoreName& store) {
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = store;
  config.threads = 2;
  {
    Running first(config, kMidMinute);
    ASSERT_TRUE(first.ok());
    Client c(first.port());
    EXPECT_EQ(Usage(c, "u_7"), 0);
    for (int64_t n = 1; n <= 3; ++n) EXPECT_EQ(Hit(c, "u_7"), std::make_pair(200, n));
    EXPECT_EQ(Usage(c, "u_7"), 3);
  }
  Running second(config, kMidMinute);
  ASSERT_TRUE(second.ok());
  Client c(second.port());
  EXPECT_EQ(Usage(c, "u_7"), 3);
  EXPECT_EQ(Hit(c, "u_7"), std::make_pair(200, int64_t{4}));
  EXPECT_EQ(Hit(c, "u_7"), std::make_pair(200, int64_t{5}));
  EXPECT_EQ(Hit(c, "u_7").first, 429);
  EXPECT_EQ(Hit(c, "u_8"), std::make_pair(200, int64_t{1})) << "another user, another counter";
}

TEST(RateLimitServer, CountersInRedisOutliveTheServer) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  CountsOutliveTheServer(StoreName{StoreName::Kind::kUrl, redis->url()});
}

TEST(RateLimitServer, CountersInPostgresqlOutliveTheServer) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  const StoreName store{StoreName::Kind::kPostgresUrl, postgres->url()};
  {
    ServeConfig config;
    config.rules = SeedServiceRules();
    config.store = store;
    Running s(config, kMidMinute);
    ASSERT_TRUE(s.ok());
    EXPECT_NE(s.server().Banner().find("deciding in PostgreSQL at " + postgres->url()),
              std::string::npos)
        << s.server().Banner();
  }
  CountsOutliveTheServer(store);
}

// `--rules postgres --store postgres`: one private PostgreSQL server holds the rules table and
// the counters; the rules alone on one get a server of their own, the counters staying in process.
TEST(RateLimitServer, RulesAndCountersOnAPrivatePostgresqlShareOneServer) {
  RATELAB_REQUIRE_POSTGRES();
  ServeConfig config;
  config.rules_store = StoreName{StoreName::Kind::kPrivatePostgres, ""};
  config.store = StoreName{StoreName::Kind::kPrivatePostgres, ""};
  {
    Running s(config, kMidMinute);
    ASSERT_TRUE(s.ok());
    const std::string banner = s.server().Banner();
    const size_t at = banner.find("deciding in PostgreSQL at ");
    ASSERT_NE(at, std::string::npos) << banner;
    const size_t from = at + std::string_view("deciding in PostgreSQL at ").size();
    const std::string url = banner.substr(from, banner.find(' ', from) - from);
    EXPECT_NE(banner.find("by the rules of PostgreSQL at " + url + ", followed"), std::string::npos)
        << banner;
    Client c(s.port());
    EXPECT_EQ(Hit(c, "user_1").first, 200);
  }
  config.store = StoreName{};
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s.server().Banner().find("deciding in process by the rules of PostgreSQL at "),
            std::string::npos)
      << s.server().Banner();
}

// A store that stops answering (SIGSTOP: its connections stay open, new ones are never
// answered) costs each decision no more than --store-timeout, connecting again included; the
// health check never touches it; and once it is back, a decision is right again. (A decision
// answered 503 may still count once the store resumes: docs/design.md.)
template <typename Server>
void AStalledStoreCostsEachDecisionItsTimeout(Server& store, const StoreName& where) {
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = where;
  config.store_timeout = std::chrono::milliseconds(200);
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  Client c(s.port());
  EXPECT_EQ(Hit(c, "before"), std::make_pair(200, int64_t{1}));
  const auto timed = [](auto call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::steady_clock::now() - start;
  };
  ASSERT_TRUE(store.Pause().ok());
  for (int i = 0; i < 4; ++i) {
    int status = 0;
    const auto took = timed([&] { status = Hit(c, "stalled").first; });
    EXPECT_EQ(status, 503);
    EXPECT_LT(took, std::chrono::milliseconds(200 + 150)) << "decision " << i;
  }
  std::string health;
  const auto healthz = timed([&] { health = c.Send(http::verb::get, "/healthz").body(); });
  EXPECT_EQ(health, R"({"status":"ok"})");
  EXPECT_LT(healthz, std::chrono::milliseconds(100));
  ASSERT_TRUE(store.Resume().ok());
  int64_t count = 0;
  for (int i = 0; i < 20 && count != 1; ++i) {  // the client reconnects on its next call
    count = Hit(c, "after").second;
    if (count != 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(count, 1);
}

TEST(RateLimitServer, AStalledRedisCostsEachDecisionItsTimeout) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  AStalledStoreCostsEachDecisionItsTimeout(*redis, StoreName{StoreName::Kind::kUrl, redis->url()});
}

// On Redis, a thread whose round to the store is out goes on with its HTTP: with the store
// stalled, a decision waits for its timeout while the same thread answers another connection's
// health check at once.
TEST(RateLimitServer, OnRedisAThreadServesOtherConnectionsWhileItsRoundIsOut) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = StoreName{StoreName::Kind::kUrl, redis->url()};
  config.store_timeout = std::chrono::milliseconds(500);
  config.threads = 1;
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  Client a(s.port());
  Client b(s.port());
  EXPECT_EQ(Hit(a, "before").first, 200);
  ASSERT_TRUE(redis->Pause().ok());
  std::atomic<bool> answered{false};
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  std::thread stalled([&] {
    status = Hit(a, "stalled").first;
    answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the hit read, its round out
  const auto health_start = std::chrono::steady_clock::now();
  EXPECT_EQ(b.Send(http::verb::get, "/healthz").body(), R"({"status":"ok"})");
  EXPECT_LT(std::chrono::steady_clock::now() - health_start, std::chrono::milliseconds(100));
  EXPECT_FALSE(answered) << "the stalled decision waits for its timeout";
  stalled.join();
  EXPECT_EQ(status, 503);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  ASSERT_TRUE(redis->Resume().ok());
}

TEST(RateLimitServer, AStalledPostgresqlCostsEachDecisionItsTimeout) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  AStalledStoreCostsEachDecisionItsTimeout(
      *postgres, StoreName{StoreName::Kind::kPostgresUrl, postgres->url()});
}

// Many decisions at once against a stalled store (60 on one thread, each on a connection of its
// own) each end within --store-timeout, however few connections the store has for them, and a
// health check sent among them is answered at once: the thread never waits on its store. On
// PostgreSQL the slowest once took 14.75 s against a timeout of 250 ms, the health check 14.49 s
// (the thread waited for each round, took one connection a round, and a decision that waited
// for a connection had a timeout more; on Redis, a decision read while the round before it
// stalled waited for that round's timeout and then its own, so that most of the 60 took two).
template <typename Server>
void ManyDecisionsAtOnceOnAStalledStoreEachEndWithinTheTimeout(Server& store,
                                                               const StoreName& where) {
  ServeConfig config;
  config.rules = SeedServiceRules();
  config.store = where;
  constexpr auto kTimeout = std::chrono::milliseconds(800);
  config.store_timeout = kTimeout;
  config.threads = 1;
  config.store_connections = 2;  // on PostgreSQL: fewer than the decisions by far
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  {
    Client c(s.port());
    EXPECT_EQ(Hit(c, "before").first, 200);
  }
  constexpr int kDecisions = 60;
  ASSERT_TRUE(store.Pause().ok());
  std::vector<int> statuses(kDecisions);
  std::vector<std::chrono::steady_clock::duration> took(kDecisions);
  std::vector<std::thread> threads;
  // Each on a connection of its own, as clients come: the connecting is part of the wait.
  for (int i = 0; i < kDecisions; ++i) {
    threads.emplace_back([&, i] {
      const auto start = std::chrono::steady_clock::now();
      Client c(s.port());
      statuses[i] = Hit(c, "stalled-" + std::to_string(i)).first;
      took[i] = std::chrono::steady_clock::now() - start;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // among the decisions
  const auto health_start = std::chrono::steady_clock::now();
  Client health(s.port());
  EXPECT_EQ(health.Send(http::verb::get, "/healthz").body(), R"({"status":"ok"})");
  const auto health_took = std::chrono::steady_clock::now() - health_start;
  for (std::thread& t : threads) t.join();
  ASSERT_TRUE(store.Resume().ok());
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 503), kDecisions);
  const auto slowest = *std::max_element(took.begin(), took.end());
  EXPECT_LT(slowest, kTimeout * 3 / 2)
      << "the slowest of " << kDecisions << " decisions took "
      << std::chrono::duration_cast<std::chrono::milliseconds>(slowest).count() << " ms";
  EXPECT_LT(health_took, std::chrono::milliseconds(100))
      << std::chrono::duration_cast<std::chrono::milliseconds>(health_took).count() << " ms";
}

TEST(RateLimitServer, ManyDecisionsAtOnceOnAStalledRedisEachEndWithinTheTimeout) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  ManyDecisionsAtOnceOnAStalledStoreEachEndWithinTheTimeout(
      *redis, StoreName{StoreName::Kind::kUrl, redis->url()});
}

TEST(RateLimitServer, ManyDecisionsAtOnceOnAStalledPostgresqlEachEndWithinTheTimeout) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  ManyDecisionsAtOnceOnAStalledStoreEachEndWithinTheTimeout(
      *postgres, StoreName{StoreName::Kind::kPostgresUrl, postgres->url()});
}

// The admin API refuses a rule the counters' store cannot enforce, rather than take it and
// answer 503 to every request it governs.
TEST(RateLimitServer, TheAdminApiRefusesARuleTheCountersStoreCannotEnforce) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  ServeConfig config;
  config.rules_store = *StoreName::Parse(postgres->url());
  config.store = StoreName{StoreName::Kind::kPostgresUrl, postgres->url()};
  config.admin_token = "t0ken";
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  Client c(s.port());
  const auto post = [&](const std::string& algorithm) {
    boost::beast::http::request<boost::beast::http::string_body> r(http::verb::post,
                                                                   "/ratelimit/rules", 11);
    r.set(http::field::host, "127.0.0.1");
    r.set(http::field::authorization, "Bearer t0ken");
    r.body() = R"({"scope_type": "user", "endpoint": "/pay", "algorithm": ")" + algorithm +
               R"(", "max_requests": 3, "window_seconds": 60})";
    r.prepare_payload();
    http::write(c.stream, r);
    testing_http::Response answer;
    http::read(c.stream, c.buffer, answer);
    return answer;
  };
  const auto refused = post("sliding-log");
  EXPECT_EQ(refused.result_int(), 400);
  EXPECT_NE(refused.body().find("algorithm: the rule '"), std::string::npos) << refused.body();
  EXPECT_NE(refused.body().find("which no protocol enforces on PostgreSQL"), std::string::npos)
      << refused.body();
  EXPECT_EQ(post("fixed-window").result_int(), 201);
}

// The admin API's rules store (PostgreSQL, reached through a driver that would wait for good)
// stops answering: its calls are answered 503 within --store-timeout, and the server goes on.
TEST(RateLimitServer, AStalledRulesStoreCostsTheAdminApiNoMoreThanItsTimeout) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  ServeConfig config;
  config.rules_store = *StoreName::Parse(postgres->url());
  config.admin_token = "t0ken-t0ken-t0ken";
  config.store_timeout = std::chrono::milliseconds(200);
  Running s(config, kMidMinute);
  ASSERT_TRUE(s.ok());
  const auto list = [&] {
    Client c(s.port());
    boost::beast::http::request<boost::beast::http::string_body> r(http::verb::get,
                                                                   "/ratelimit/rules", 11);
    r.set(http::field::host, "127.0.0.1");
    r.set(http::field::authorization, "Bearer t0ken-t0ken-t0ken");
    http::write(c.stream, r);
    testing_http::Response answer;
    http::read(c.stream, c.buffer, answer);
    return answer;
  };
  EXPECT_EQ(list().result_int(), 200);
  ASSERT_TRUE(postgres->Pause().ok());
  for (int i = 0; i < 2; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const testing_http::Response answer = list();
    EXPECT_EQ(answer.result_int(), 503);
    EXPECT_EQ(answer.body(), R"({"error":"the rules store did not answer in time"})");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200 + 200));
  }
  Client c(s.port());
  EXPECT_EQ(Hit(c, "during").first, 200) << "decisions never wait for the rules store";
  ASSERT_TRUE(postgres->Resume().ok());
  int status = 0;
  for (int i = 0; i < 50 && status != 200; ++i) {
    status = list().result_int();
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200);
}

TEST(RateLimitServer, ARuleTheStoreCannotEnforceIsRefusedAtTheStart) {
  RATELAB_START_POSTGRES(postgres, PostgresServerOptions{});
  ServeConfig config;
  Rule r = SeedServiceRules().rules()[0];
  r.algorithm = Algorithm::kSlidingLog;
  config.rules = *RuleSet::Make({r});
  config.store = StoreName{StoreName::Kind::kPostgresUrl, postgres->url()};
  Result<std::unique_ptr<RateLimitServer>> started = RateLimitServer::Start(config, kMidMinute);
  ASSERT_FALSE(started.ok());
  EXPECT_EQ(started.status().message(),
            "the rule '" + r.ToString() +
                "' is sliding-log, which no protocol enforces on PostgreSQL (fixed-window, "
                "token-bucket do)");
  config.threads = 0;
  EXPECT_EQ(RateLimitServer::Start(config, kMidMinute).status().message(),
            "a server needs at least one thread");
}

}  // namespace
}  // namespace ratelab
