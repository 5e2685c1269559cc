// StoreName: each kind of store as its row says, and what ratelab can restart on it.
#include "impl/store/store_name.h"

#include <gtest/gtest.h>

#include <string>

namespace ratelab {
namespace {

StoreName Named(const std::string& text) {
  Result<StoreName> name = StoreName::Parse(text);
  EXPECT_TRUE(name.ok()) << name.status();
  return name.ok() ? *name : StoreName{};
}

TEST(StoreName, EachKindIsWhatItsRowSays) {
  struct Case {
    std::string text;
    StoreName::Kind kind;
    bool redis, postgres, owned;
  };
  const Case cases[] = {
      {"memory", StoreName::Kind::kMemory, false, false, false},
      {"redis", StoreName::Kind::kPrivateRedis, true, false, true},
      {"redis://127.0.0.1:6379", StoreName::Kind::kUrl, true, false, false},
      {"postgres", StoreName::Kind::kPrivatePostgres, false, true, true},
      {"postgresql://localhost/db", StoreName::Kind::kPostgresUrl, false, true, false},
  };
  for (const Case& c : cases) {
    const StoreName name = Named(c.text);
    EXPECT_EQ(name.kind, c.kind) << c.text;
    EXPECT_EQ(name.redis(), c.redis) << c.text;
    EXPECT_EQ(name.postgres(), c.postgres) << c.text;
    EXPECT_EQ(name.owns_server(), c.owned) << c.text;
    EXPECT_EQ(name.ToString(), c.text) << "read back as written";
  }
}

// A restart of state on a server ratelab did not start is not ratelab's to make; state in its
// own memory (the kv protocols on a PostgreSQL server, the SQL ones on a Redis) or on a server
// it started is.
TEST(StoreName, CanRestartWhatLivesOnlyWhereRatelabCanRestartIt) {
  const StoreName redis_url = Named("redis://127.0.0.1:6379");
  const StoreName postgres_url = Named("postgresql://localhost/db");
  EXPECT_FALSE(redis_url.CanRestart(/*kv=*/true, /*sql=*/false));
  EXPECT_TRUE(redis_url.CanRestart(false, true));
  EXPECT_FALSE(postgres_url.CanRestart(false, true));
  EXPECT_TRUE(postgres_url.CanRestart(true, false));
  EXPECT_FALSE(postgres_url.CanRestart(true, true));
  for (const std::string owned : {"memory", "redis", "postgres"}) {
    EXPECT_TRUE(Named(owned).CanRestart(true, true)) << owned;
  }
}

}  // namespace
}  // namespace ratelab
