// A private redis-server for one test (impl/store/redis_server.h). Header-only; for tests.
//
//   RATELAB_START_REDIS(server, options);   // std::unique_ptr<RedisServer> server
//   RATELAB_REQUIRE_REDIS_SERVER();         // the test starts servers itself
//
// Where redis-server is missing, the test fails under CI=true (CI must run every real-server
// test) and is skipped with the reason elsewhere. Any other start-up failure fails the test.
#ifndef RATELAB_TESTING_REDIS_H_
#define RATELAB_TESTING_REDIS_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <memory>
#include <string_view>
#include <vector>

#include "impl/store/kv.h"
#include "impl/store/redis_server.h"
#include "testing/redis_cluster_server.h"

namespace ratelab::testing_redis {

inline bool UnderCi() {
  const char* ci = getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

// Whether a start failure may skip the test rather than fail it.
inline bool MaySkip(const Status& s) { return absl::IsNotFound(s) && !UnderCi(); }

// The reply to `argv`, failing the test (and answering nil) when the store cannot be reached.
inline KvReply Cmd(Kv& kv, const std::vector<std::string>& argv) {
  Result<KvReply> r = kv.Execute(argv);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : KvReply::Nil();
}

}  // namespace ratelab::testing_redis

// `var` = *(`started`), a Result<std::unique_ptr<...>>; skips or fails the test as above.
#define RATELAB_START_OR_SKIP(var, started)                                               \
  auto var##_started = (started);                                                         \
  if (!var##_started.ok() && ::ratelab::testing_redis::MaySkip(var##_started.status())) { \
    GTEST_SKIP() << var##_started.status();                                               \
  }                                                                                       \
  ASSERT_TRUE(var##_started.ok()) << var##_started.status();                              \
  auto var = *std::move(var##_started)

#define RATELAB_START_REDIS(server, options) \
  RATELAB_START_OR_SKIP(server, ::ratelab::RedisServer::Start(options))

// The same for a 3-master Redis Cluster (testing/redis_cluster_server.h):
//   RATELAB_START_REDIS_CLUSTER(cluster);   // std::unique_ptr<RedisClusterServers> cluster
#define RATELAB_START_REDIS_CLUSTER(cluster) \
  RATELAB_START_OR_SKIP(cluster, ::ratelab::RedisClusterServers::Start(3))

// For a test that starts its servers elsewhere (through ratelab): skips it, outside CI, where
// redis-server is missing; under CI=true it runs and fails.
#define RATELAB_REQUIRE_REDIS_SERVER()                                          \
  if (!::ratelab::OnPath("redis-server") &&                                     \
      ::ratelab::testing_redis::MaySkip(absl::NotFoundError("redis-server"))) { \
    GTEST_SKIP() << "redis-server is not on PATH";                              \
  }

#endif  // RATELAB_TESTING_REDIS_H_
