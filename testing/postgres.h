// A private PostgreSQL server for one test (impl/store/postgres_server.h). Header-only.
//
//   RATELAB_START_POSTGRES(server, options);   // std::unique_ptr<PostgresServer> server
//   RATELAB_REQUIRE_POSTGRES();                // the test starts servers itself (through ratelab)
//
// Where PostgreSQL is missing, the test fails under CI=true and is skipped with the reason
// elsewhere (as testing/redis.h does for redis-server).
#ifndef RATELAB_TESTING_POSTGRES_H_
#define RATELAB_TESTING_POSTGRES_H_

#include "impl/store/postgres_server.h"
#include "testing/redis.h"

#define RATELAB_START_POSTGRES(server, options) \
  RATELAB_START_OR_SKIP(server, ::ratelab::PostgresServer::Start(options))

#define RATELAB_REQUIRE_POSTGRES()                                    \
  if (auto bin = ::ratelab::PostgresBinDir();                         \
      !bin.ok() && ::ratelab::testing_redis::MaySkip(bin.status())) { \
    GTEST_SKIP() << bin.status();                                     \
  }

#endif  // RATELAB_TESTING_POSTGRES_H_
