// RedisClusterKv: slot hashing against Redis's published values and the server's own CLUSTER
// KEYSLOT, routing over a real 3-master cluster, and MOVED and ASK during a live slot migration.
// (Every kv protocol deciding on the cluster: impl/limiters/kv_protocols_on_redis_test.cc.)
#include "impl/store/redis_cluster.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/redis.h"
#include "testing/redis_cluster_server.h"

namespace ratelab {
namespace {

using Argv = std::vector<std::string>;

using testing_redis::Cmd;

TEST(KeySlot, MatchesRedisPublishedValues) {
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("user1000"));
  // Only the first '{' counts, and an empty tag hashes the whole key.
  EXPECT_EQ(KeySlot("foo{}{bar}"), Crc16("foo{}{bar}") & 16383);
  EXPECT_EQ(KeySlot("foo{{bar}}zap"), KeySlot("{bar"));
  EXPECT_EQ(KeySlot("foo{bar}{zap}"), KeySlot("bar"));
}

TEST(KeysOf, FindsTheKeysRedisClusterRoutesBy) {
  auto keys = [](const Argv& argv) {
    std::vector<std::string> out;
    for (std::string_view k : KeysOf(argv)) out.emplace_back(k);
    return out;
  };
  EXPECT_EQ(keys({"EVALSHA", "abc", "2", "k1", "k2", "arg"}), (Argv{"k1", "k2"}));
  EXPECT_EQ(keys({"eval", "return 1", "0", "arg"}), Argv{});
  EXPECT_EQ(keys({"INCR", "k"}), Argv{"k"});
  EXPECT_EQ(keys({"DEL", "a", "b"}), (Argv{"a", "b"}));
  EXPECT_EQ(keys({"MSET", "a", "1", "b", "2"}), (Argv{"a", "b"}));
  EXPECT_EQ(keys({"TIME"}), Argv{});
  EXPECT_EQ(keys({"SCRIPT", "FLUSH"}), Argv{});
}

TEST(RedisClusterUrl, ParsesNodesAndRefusesTheRest) {
  Result<std::vector<RedisEndpoint>> nodes =
      ParseRedisClusterUrl("redis-cluster://127.0.0.1:7000,[::1]:7001,cache");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[1].host, "::1");
  EXPECT_EQ((*nodes)[1].port, 7001);
  EXPECT_EQ((*nodes)[2].port, 6379);
  for (const char* bad : {"redis://127.0.0.1:7000", "redis-cluster://", "redis-cluster://a:1,",
                          "redis-cluster://a:1/3", "redis-cluster://a:x"}) {
    Result<std::vector<RedisEndpoint>> r = ParseRedisClusterUrl(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("bad Redis Cluster URL"), std::string_view::npos);
  }
}

TEST(RedisCluster, RoutesEveryKeyToTheMasterThatOwnsItsSlot) {
  RATELAB_START_REDIS_CLUSTER(cluster);
  RedisClusterKv kv(ParseRedisClusterUrl(cluster->url()).value());
  ASSERT_EQ(kv.Masters().size(), 3u);
  // Keys with separators and braces, as users write them.
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) {
    keys.push_back("user:" + std::to_string(i) + (i % 3 == 0 ? "{x" : i % 3 == 1 ? "}:{" : ""));
  }
  for (const std::string& key : keys) {
    EXPECT_EQ(Cmd(kv, {"SET", key, key}).text, "OK");
    // The server's own hash agrees with ours.
    EXPECT_EQ(Cmd(kv, {"CLUSTER", "KEYSLOT", key}).integer, KeySlot(key)) << key;
  }
  EXPECT_EQ(Cmd(kv, {"DBSIZE"}).integer, 120) << "the sum over the masters";
  std::set<std::string> masters_used;
  for (const std::string& key : keys) {
    const std::optional<RedisEndpoint> owner = kv.Owner(KeySlot(key));
    ASSERT_TRUE(owner.has_value());
    RedisKv direct(*owner);
    EXPECT_EQ(Cmd(direct, {"GET", key}).text, key) << "on the owner itself";
    masters_used.insert(owner->Url());
  }
  EXPECT_EQ(masters_used.size(), 3u);
  EXPECT_EQ(kv.counters().moved, 0);
  // Keys of two slots in one command: Redis's own refusal, not a wrong answer.
  EXPECT_NE(Cmd(kv, {"MGET", "foo", "bar"}).text.find("CROSSSLOT"), std::string::npos);
  EXPECT_EQ(Cmd(kv, {"FLUSHALL"}).text, "OK");
  EXPECT_EQ(Cmd(kv, {"DBSIZE"}).integer, 0);
}

// Moves one slot from its owner A to another master B as redis-cli --cluster reshard does:
// while it migrates, a key already moved gets ASK (the map stays); once done, MOVED.
TEST(RedisCluster, FollowsAskDuringAMigrationAndMovedAfterIt) {
  RATELAB_START_REDIS_CLUSTER(cluster);
  RedisClusterKv kv(ParseRedisClusterUrl(cluster->url()).value());
  const std::string key = "migrating:{k}";
  const int slot = KeySlot(key);
  ASSERT_EQ(Cmd(kv, {"SET", key, "v"}).text, "OK");
  const RedisEndpoint a = *kv.Owner(slot);
  RedisEndpoint b;
  for (const RedisEndpoint& m : kv.Masters()) {
    if (!(m == a)) b = m;
  }
  RedisKv on_a(a), on_b(b);
  const std::string a_id = Cmd(on_a, {"CLUSTER", "MYID"}).text;
  const std::string b_id = Cmd(on_b, {"CLUSTER", "MYID"}).text;
  const std::string s = std::to_string(slot);
  ASSERT_EQ(Cmd(on_b, {"CLUSTER", "SETSLOT", s, "IMPORTING", a_id}).text, "OK");
  ASSERT_EQ(Cmd(on_a, {"CLUSTER", "SETSLOT", s, "MIGRATING", b_id}).text, "OK");
  ASSERT_EQ(Cmd(on_a, {"MIGRATE", b.host, std::to_string(b.port), key, "0", "5000"}).text, "OK");

  EXPECT_EQ(Cmd(kv, {"GET", key}).text, "v");
  EXPECT_EQ(kv.counters().ask, 1);
  EXPECT_EQ(kv.counters().moved, 0);
  EXPECT_EQ(kv.Owner(slot)->Url(), a.Url()) << "ASK does not change the map";

  // Every master is told, as redis-cli --cluster does: a master left to learn it by gossip may
  // still hand out the old map when the client reads it again.
  std::vector<RedisEndpoint> told = {b, a};
  for (const RedisEndpoint& m : kv.Masters()) {
    if (!(m == a) && !(m == b)) told.push_back(m);
  }
  for (const RedisEndpoint& m : told) {
    RedisKv node(m);
    ASSERT_EQ(Cmd(node, {"CLUSTER", "SETSLOT", s, "NODE", b_id}).text, "OK");
  }
  EXPECT_EQ(Cmd(kv, {"GET", key}).text, "v");
  EXPECT_EQ(kv.counters().moved, 1);
  EXPECT_EQ(kv.Owner(slot)->Url(), b.Url()) << "MOVED reads the map again";
  EXPECT_EQ(Cmd(kv, {"INCR", "migrating:{k}:n"}).integer, 1);
  EXPECT_EQ(kv.counters().moved, 1) << "the new map is used from then on";
}

}  // namespace
}  // namespace ratelab
