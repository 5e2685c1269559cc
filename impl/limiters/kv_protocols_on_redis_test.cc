// Every kv protocol on a real Redis Cluster: each user's keys on the master that owns its slot,
// the decisions the same as on one server.
#include <gtest/gtest.h>

#include "impl/core/system_clock.h"
#include "impl/limiters/protocol.h"
#include "impl/store/redis_cluster.h"
#include "testing/redis.h"
#include "testing/redis_cluster_server.h"

namespace ratelab {
namespace {

using testing_redis::Cmd;

TEST(RedisCluster, EveryKvProtocolDecidesOnTheCluster) {
  RATELAB_START_REDIS_CLUSTER(cluster);
  RedisClusterKv kv(ParseRedisClusterUrl(cluster->url()).value());
  InlineExecutor executor;
  const SystemClock clock;
  int protocols = 0;
  for (const ProtocolInfo& info : Protocols()) {
    // One that waits for a replica needs one, and this cluster's masters have none.
    if (info.store != StoreKind::kKv || info.needs_replica) continue;
    ++protocols;
    const Algorithm algorithm = info.algorithm;
    const Policy policy = Describe(algorithm).bucket
                              ? Policy::Bucket(algorithm, 3, std::chrono::seconds(10))
                              : Policy::Window(algorithm, 3, std::chrono::seconds(10));
    Result<std::unique_ptr<Protocol>> p = MakeProtocol(info.name, policy, Stores{&kv, nullptr});
    ASSERT_TRUE(p.ok()) << info.name << ": " << p.status();
    // Users whose keys land on every master; four requests each at one instant: 3 admitted.
    for (int user = 0; user < 12; ++user) {
      const Instant now = clock.Now();
      for (int i = 0; i < 4; ++i) {
        const Request r{"user", "u:{" + std::to_string(user) + "}", "/api", 1, now};
        Context ctx(executor);
        Result<Decision> d = RunInline((*p)->Decide(ctx, r));
        ASSERT_TRUE(d.ok()) << info.name << ": " << d.status();
        EXPECT_EQ(d->allowed, i < 3) << info.name << " user " << user << " request " << i;
      }
    }
    for (const RedisEndpoint& m : kv.Masters()) {
      RedisKv node(m);
      EXPECT_GT(Cmd(node, {"DBSIZE"}).integer, 0) << info.name << " left nothing on " << m.Url();
    }
    EXPECT_EQ(Cmd(kv, {"FLUSHALL"}).text, "OK");
  }
  EXPECT_EQ(protocols, 8);
  EXPECT_EQ(kv.counters().moved, 0);
}

}  // namespace
}  // namespace ratelab
