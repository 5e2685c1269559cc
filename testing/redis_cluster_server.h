// A real Redis Cluster for tests: `masters` redis-server processes started with
// --cluster-enabled yes on free loopback ports (each also needs its port + 10000 free, for the
// cluster bus), joined by `redis-cli --cluster create` with no replicas, each master owning an
// equal share of the 16384 slots. Stopped and removed with the object.
#ifndef RATELAB_TESTING_REDIS_CLUSTER_SERVER_H_
#define RATELAB_TESTING_REDIS_CLUSTER_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/redis_kv.h"
#include "impl/store/redis_server.h"

namespace ratelab {

// Whether 127.0.0.1:`port` can be bound now (it is returned); 0 asks for any free port, which is
// returned; -1 when it cannot.
int Bindable(int port);

class RedisClusterServers {
 public:
  // Starts the servers, creates the cluster, and waits until every node says cluster_state:ok
  // and agrees on the map. NotFound if redis-server or redis-cli (Debian package redis-tools) is
  // not on PATH; Unavailable with what went wrong otherwise.
  static Result<std::unique_ptr<RedisClusterServers>> Start(int masters = 3);

  // redis-cluster://127.0.0.1:P1,127.0.0.1:P2,...
  std::string url() const;
  // Each node's TCP endpoint, in start order.
  std::vector<RedisEndpoint> endpoints() const;
  RedisServer& server(size_t i) { return *servers_[i]; }
  size_t size() const { return servers_.size(); }

 private:
  RedisClusterServers() = default;
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<int> ports_;
};

}  // namespace ratelab

#endif  // RATELAB_TESTING_REDIS_CLUSTER_SERVER_H_
