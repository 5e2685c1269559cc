// The stores' drivers as the live runtimes use them: each kind opened from its name, a private
// server started, a store required empty refused when it holds state and emptied after, and a
// thread's connection, overlapped or not.
#include "impl/drivers/store_drivers.h"

#include <gtest/gtest.h>

#include "impl/core/system_clock.h"
#include "impl/drivers/postgres_tables.h"
#include "impl/limiters/protocol.h"
#include "impl/store/postgres_pool.h"
#include "impl/store/redis_pipeline.h"
#include "testing/postgres.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

using testing_redis::Cmd;

std::unique_ptr<StoreDriver> Open(std::string_view text) {
  Result<StoreName> name = StoreName::Parse(text);
  EXPECT_TRUE(name.ok()) << name.status();
  if (!name.ok()) return nullptr;
  Result<std::unique_ptr<StoreDriver>> driver = OpenStoreDriver(*name);
  EXPECT_TRUE(driver.ok()) << driver.status();
  return driver.ok() ? *std::move(driver) : nullptr;
}

TEST(StoreDrivers, EachKindOfStoreHasItsDriver) {
  const std::unique_ptr<StoreDriver> memory = Open("memory");
  ASSERT_TRUE(memory->Start().ok() && memory->Prepare(true).ok());
  EXPECT_EQ(memory->Where(), "in process");
  EXPECT_TRUE(absl::IsFailedPrecondition(memory->Connect({}).status()))
      << "no kv or document store without a clock";
  const auto serves = [](const StoreDriver& d) {
    std::string out;
    for (StoreKind k : {StoreKind::kMemory, StoreKind::kKv, StoreKind::kDocs, StoreKind::kSql}) {
      if (d.Serves(k)) out += std::string(out.empty() ? "" : ",") + std::string(StoreKindName(k));
    }
    return out;
  };
  EXPECT_EQ(serves(*memory), "memory,kv,docs");

  const std::unique_ptr<StoreDriver> redis = Open("redis://10.1.2.3:6380/2");
  EXPECT_EQ(redis->Where(), "on Redis at redis://10.1.2.3:6380/2");
  EXPECT_EQ(redis->name().ToString(), "redis://10.1.2.3:6380/2");
  EXPECT_EQ(serves(*redis), "kv");
  EXPECT_EQ(serves(*Open("postgres")), "sql");
  EXPECT_EQ(Open("postgresql://rl@db.example/limits")->Where(),
            "in PostgreSQL at postgresql://rl@db.example/limits");
  EXPECT_EQ(Open("redis-cluster://10.1.2.3:7000,10.1.2.4:7000")->address(),
            "redis-cluster://10.1.2.3:7000,10.1.2.4:7000");

  // A URL's parameters are libpq's to judge, before anything starts.
  const Result<std::unique_ptr<StoreDriver>> bad =
      OpenStoreDriver(*StoreName::Parse("postgresql://h/d?nope=1"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "'postgresql://h/d?nope=1' is not a PostgreSQL URL: invalid URI query parameter: "
            "\"nope\"");
}

// With a clock, the in-process store holds one MemoryKv and one MemoryDocs, which every thread's
// connection shares.
TEST(StoreDrivers, TheInProcessStoresAreSharedByEveryConnection) {
  const SystemClock clock;
  Result<std::unique_ptr<StoreDriver>> memory = OpenStoreDriver(StoreName{}, {.clock = &clock});
  ASSERT_TRUE(memory.ok() && (*memory)->Start().ok());
  Result<StoreConnection> one = (*memory)->Connect({});
  Result<StoreConnection> two = (*memory)->Connect({});
  ASSERT_TRUE(one.ok() && two.ok());
  ASSERT_TRUE(one->kv != nullptr && one->docs != nullptr && one->sql == nullptr);
  EXPECT_NE(one->kv, two->kv) << "a connection each";
  EXPECT_EQ(Cmd(*one->kv, {"INCR", "k"}).integer, 1);
  EXPECT_EQ(Cmd(*two->kv, {"INCR", "k"}).integer, 2);
  const Document insert = {{"insert", "c"}, {"documents", {{{"_id", 1}}}}};
  ASSERT_TRUE(one->docs->Execute(insert).ok());
  const Document find = {{"find", "c"}, {"filter", Document::object()}};
  Result<Document> found = two->docs->Execute(find);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)["cursor"]["firstBatch"].size(), 1u) << *found;
  // Emptied, as a Redis is flushed: what connects from then on finds nothing.
  (*memory)->Empty();
  Result<StoreConnection> three = (*memory)->Connect({});
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(Cmd(*three->kv, {"INCR", "k"}).integer, 1);
  Result<Document> none = three->docs->Execute(find);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)["cursor"]["firstBatch"].empty()) << *none;
}

TEST(StoreDrivers, ARedisRequiredEmptyIsRefusedWhenItHoldsAKeyAndEmptiedAfter) {
  RATELAB_REQUIRE_REDIS_SERVER();
  const std::unique_ptr<StoreDriver> own = Open("redis");
  ASSERT_TRUE(own->Start().ok());
  ASSERT_TRUE(own->address().starts_with("unix://")) << own->address();
  ASSERT_TRUE(own->Prepare(true).ok());
  Result<StoreConnection> thread = own->Connect({});
  ASSERT_TRUE(thread.ok()) << thread.status();
  ASSERT_EQ(thread->kv, thread->direct_kv);
  EXPECT_EQ(thread->pipeline, nullptr);
  EXPECT_EQ(Cmd(*thread->kv, {"SET", "k", "1"}).text, "OK");

  // The same server by its URL, as a user names a running one: it holds a key now.
  const std::unique_ptr<StoreDriver> running = Open(own->address());
  ASSERT_TRUE(running->Start().ok());
  const Status refused = running->Prepare(true);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find("holds 1 keys"), std::string::npos) << refused;

  own->Empty();
  EXPECT_EQ(Cmd(*thread->kv, {"DBSIZE"}).integer, 0);
  EXPECT_TRUE(running->Prepare(true).ok());

  // Overlapped, a thread's kv protocols send through a pipeline on its own connection.
  Result<StoreConnection> overlapped =
      own->Connect({.timeout = std::chrono::seconds(1), .overlapped = true});
  ASSERT_TRUE(overlapped.ok()) << overlapped.status();
  ASSERT_NE(overlapped->pipeline, nullptr);
  EXPECT_EQ(overlapped->kv, static_cast<Kv*>(overlapped->pipeline));
  EXPECT_EQ(Cmd(*overlapped->direct_kv, {"PING"}).text, "PONG");
}

TEST(StoreDrivers, APostgresqlRequiredEmptyIsRefusedWhenRatelabsTablesHoldARowAndEmptiedAfter) {
  RATELAB_REQUIRE_POSTGRES();
  const std::unique_ptr<StoreDriver> own = Open("postgres");
  ASSERT_TRUE(own->Start().ok());
  ASSERT_TRUE(own->Prepare(false).ok());  // the tables made
  Result<StoreConnection> thread = own->Connect({});
  ASSERT_TRUE(thread.ok()) << thread.status();
  ASSERT_NE(thread->sql, nullptr);
  EXPECT_EQ(thread->pool, nullptr);
  const SqlStatement insert{"test_insert",
                            "INSERT INTO ratelab.token_bucket VALUES ('k', 1, 2, true, 3)"};
  Result<SqlReply> inserted = thread->sql->Execute(insert, {});
  ASSERT_TRUE(inserted.ok() && !inserted->is_error()) << inserted.status();

  const std::unique_ptr<StoreDriver> running = Open(own->address());
  const Status refused = running->Prepare(true);
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find("already holds 1 rows in ratelab's tables"), std::string::npos)
      << refused;

  // Refused, it empties nothing; once required empty and found so, it is emptied after.
  running->Empty();
  const SqlStatement count{"test_count", "SELECT count(*) FROM ratelab.token_bucket"};
  EXPECT_EQ(thread->sql->Execute(count, {})->rows.at(0).at(0), "1");
  PostgresSql admin(own->address());
  ASSERT_TRUE(admin.Run(TruncateRatelabTables()).ok());
  ASSERT_TRUE(running->Prepare(true).ok());
  ASSERT_TRUE(thread->sql->Execute(insert, {}).ok());
  running->Empty();
  EXPECT_EQ(thread->sql->Execute(count, {})->rows.at(0).at(0), "0");

  Result<StoreConnection> overlapped =
      own->Connect({.timeout = std::chrono::seconds(1), .overlapped = true, .connections = 2});
  ASSERT_TRUE(overlapped.ok()) << overlapped.status();
  ASSERT_NE(overlapped->pool, nullptr);
  EXPECT_EQ(overlapped->sql, static_cast<Sql*>(overlapped->pool));
}

}  // namespace
}  // namespace ratelab
