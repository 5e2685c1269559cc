// The simulator's stores on real servers, as OpenStoreSource opens them from their names: what
// each says of itself, a PostgreSQL URL's parameters checked by libpq, and a store that cannot be
// reached failing the search rather than letting it find nothing.
#include "live/server_stores.h"

#include <gtest/gtest.h>

#include "sim/search.h"

namespace ratelab {
namespace {

std::shared_ptr<StoreSource> Open(std::string_view name) {
  Result<std::shared_ptr<StoreSource>> source = OpenStoreSource(name);
  EXPECT_TRUE(source.ok()) << source.status();
  return source.ok() ? *source : nullptr;
}

TEST(OpenStoreSource, EachStoreSaysWhereTheProtocolsRunAndWhetherRatelabOwnsIt) {
  const std::shared_ptr<StoreSource> memory = Open("memory");
  EXPECT_TRUE(memory->memory() && !memory->sql() && !memory->owns_server());
  EXPECT_EQ(memory->Note(), "");
  const std::shared_ptr<StoreSource> redis = Open("redis");
  EXPECT_TRUE(!redis->memory() && !redis->sql() && redis->owns_server());
  const std::shared_ptr<StoreSource> url = Open("redis://10.1.2.3:6380/2");
  EXPECT_EQ(url->where(), "redis://10.1.2.3:6380/2");
  EXPECT_FALSE(url->owns_server());
  EXPECT_NE(url->Note().find("not on virtual time"), std::string::npos) << url->Note();
  const std::shared_ptr<StoreSource> postgres = Open("postgres");
  EXPECT_TRUE(postgres->sql() && postgres->owns_server());
  EXPECT_TRUE(postgres->memory()) << "the kv protocols run on MemoryKv beside it";
  const std::shared_ptr<StoreSource> database = Open("postgresql://rl@db.example/limits");
  EXPECT_TRUE(database->sql() && !database->owns_server());
  EXPECT_FALSE(Open("redis-cluster://10.1.2.3:7000,10.1.2.4:7000")->owns_server());
}

TEST(OpenStoreSource, APostgresqlUrlsParametersAreCheckedByLibpq) {
  const Result<std::shared_ptr<StoreSource>> bad = OpenStoreSource("postgresql://h/d?nope=1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "'postgresql://h/d?nope=1' is not a PostgreSQL URL: invalid URI query parameter: "
            "\"nope\"");
}

TEST(OpenStoreSource, MemoryHasNoSqlStoreAndSaysHowToNameOne) {
  const Result<std::unique_ptr<SqlBackend>> sql = Open("memory")->OpenSql(Durability::kAlways);
  ASSERT_FALSE(sql.ok());
  EXPECT_NE(sql.status().message().find("pass --store postgres"), std::string::npos);
}

TEST(Search, AStoreThatCannotBeReachedIsAnErrorNotNothingFound) {
  SearchOptions options;
  options.base.policy = Policy::Bucket(Algorithm::kGcra, 1, std::chrono::seconds(1));
  options.base.checks = {CheckId::kPromise};
  options.seeds.last = 5;
  options.stores = Open("redis://127.0.0.1:1/0");  // nothing listens there
  Result<std::shared_ptr<const ProtocolInfo>> protocol =
      ResolveProtocol("kv-gcra-lua", std::nullopt);
  ASSERT_TRUE(protocol.ok()) << protocol.status();
  Result<SearchResult> r = Search(*protocol, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
}

}  // namespace
}  // namespace ratelab
