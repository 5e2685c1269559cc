#include "testing/redis_replica.h"

#include <string>
#include <thread>
#include <vector>

#include "impl/store/redis_kv.h"
#include "testing/redis_cluster_server.h"

namespace ratelab {

namespace {

Result<int> FreePort() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (const int port = Bindable(0); port > 0) return port;
  }
  return absl::UnavailableError("found no free loopback port");
}

// A master sends a new replica its data at once (not after diskless sync's usual 5s delay).
const std::vector<std::string> kReplicationArgs = {"--repl-diskless-sync-delay", "0"};

Result<KvReply> Command(const RedisServer& server, std::vector<std::string> argv) {
  RedisKv kv(server.endpoint());
  return kv.Execute(argv);
}

// Once a write of its own reaches a replica (WAIT counts only the writes of its connection), every
// write the master took before it has too: the replication stream is in order. The write is
// taken back after.
Status CaughtUp(const RedisServer& master) {
  RedisKv kv(master.endpoint());
  for (int attempt = 0; attempt < 100; ++attempt) {
    Result<KvReply> set = kv.Execute(std::vector<std::string>{"SET", "ratelab:probe", "1"});
    Result<KvReply> acked = kv.Execute(std::vector<std::string>{"WAIT", "1", "100"});
    if (set.ok() && acked.ok() && acked->integer >= 1) {
      Result<KvReply> del = kv.Execute(std::vector<std::string>{"DEL", "ratelab:probe"});
      Result<KvReply> again = kv.Execute(std::vector<std::string>{"WAIT", "1", "1000"});
      if (!del.ok()) return del.status();
      if (!again.ok()) return again.status();
      return absl::OkStatus();
    }
  }
  return absl::UnavailableError("the replica took no write from its master in 10s");
}

}  // namespace

Result<std::unique_ptr<RedisServer>> StartRedisOnAPort() {
  Result<int> port = FreePort();
  if (!port.ok()) return port.status();
  RedisServerOptions options;
  options.port = *port;
  options.extra_args = kReplicationArgs;
  return RedisServer::Start(options);
}

Result<std::unique_ptr<RedisServer>> StartReplicaOf(const RedisServer& master) {
  if (master.options().port == 0) {
    return absl::InvalidArgumentError("a replica needs its master on a TCP port");
  }
  Result<int> port = FreePort();
  if (!port.ok()) return port.status();
  RedisServerOptions options;
  options.port = *port;
  options.extra_args = kReplicationArgs;
  for (std::string arg : {"--replicaof", "127.0.0.1"}) options.extra_args.push_back(arg);
  options.extra_args.push_back(std::to_string(master.options().port));
  Result<std::unique_ptr<RedisServer>> replica = RedisServer::Start(options);
  if (!replica.ok()) return replica.status();
  // Up once a write on the master reaches it: after the first sync, a master streams writes to a
  // replica only from its first acknowledgement (sent once a second).
  if (Status s = CaughtUp(master); !s.ok()) return s;
  return replica;
}

Status DetachReplica(RedisServer& master, RedisServer& replica) {
  if (Status s = CaughtUp(master); !s.ok()) return s;
  Result<KvReply> promoted = Command(replica, {"REPLICAOF", "NO", "ONE"});
  if (!promoted.ok()) return promoted.status();
  return absl::OkStatus();
}

}  // namespace ratelab
