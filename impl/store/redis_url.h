// Redis URLs, read without connecting: where a Redis server or a Redis Cluster listens.
//
//   redis://host[:port][/db]              TCP, port 6379 and database 0 by default
//   unix:///path/to/redis.sock[?db=N]     a unix socket
//   redis-cluster://host:port[,host:port...]  the seed nodes of a cluster (database 0 only)
#ifndef RATELAB_IMPL_STORE_REDIS_URL_H_
#define RATELAB_IMPL_STORE_REDIS_URL_H_

#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace ratelab {

// Where a Redis server listens, parsed from a URL.
struct RedisEndpoint {
  std::string host;       // TCP; empty for a unix socket
  int port = 6379;        // TCP
  std::string unix_path;  // a unix socket; empty for TCP
  int db = 0;

  // The URL again: redis://127.0.0.1:6379/0 or unix:///tmp/redis.sock?db=0.
  std::string Url() const;
  friend bool operator==(const RedisEndpoint&, const RedisEndpoint&) = default;
};

// InvalidArgument naming what is wrong with `url` unless it is one of the forms above.
Result<RedisEndpoint> ParseRedisUrl(std::string_view url);

bool IsRedisClusterUrl(std::string_view url);
// The nodes of `redis-cluster://host:port[,host:port...]`; InvalidArgument naming what is wrong.
Result<std::vector<RedisEndpoint>> ParseRedisClusterUrl(std::string_view url);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_REDIS_URL_H_
