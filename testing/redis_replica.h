// A real Redis replica for tests: a redis-server on a free loopback port that follows a master
// (--replicaof), started once its link to the master is up and its data caught up.
#ifndef RATELAB_TESTING_REDIS_REPLICA_H_
#define RATELAB_TESTING_REDIS_REPLICA_H_

#include <memory>

#include "impl/core/status.h"
#include "impl/store/redis_server.h"

namespace ratelab {

// A redis-server on a free loopback port (and its unix socket), no replica of anything.
Result<std::unique_ptr<RedisServer>> StartRedisOnAPort();

// A redis-server on a free loopback port following `master` (which must listen on one), returned
// once a write on the master reaches it. NotFound if redis-server is not on PATH.
Result<std::unique_ptr<RedisServer>> StartReplicaOf(const RedisServer& master);

// Waits until every write `master` took so far has reached its replicas (WAIT 1), then makes
// `replica` stop following it (REPLICAOF NO ONE): from here on it is a master of its own with
// what it had, and writes to `master` never reach it.
Status DetachReplica(RedisServer& master, RedisServer& replica);

}  // namespace ratelab

#endif  // RATELAB_TESTING_REDIS_REPLICA_H_
