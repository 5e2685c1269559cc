// Where a simulated run keeps the kv protocols' state: MemoryKv on the simulation's clock (the
// default), or a real Redis; and the SQL protocols' state: a PostgreSQL database
// (sim/sql_backend.h), which has no embedded stand-in.
//
//   memory              MemoryKv, embedded.
//   redis               a private redis-server that ratelab starts (redis_server.h) on a unix
//                       socket in a temp dir, on virtual time: before each command the server's
//                       wall clock is set to the simulation's true time, so TIME, TTLs and
//                       expiry follow the simulation exactly, and a seed gives the same history
//                       as on MemoryKv. Store restarts kill -9 and restart it.
//   postgres            a private PostgreSQL server that ratelab starts for the SQL protocols
//                       (the kv protocols run on MemoryKv). Store restarts kill -9 and restart it.
//   postgresql://...    an existing PostgreSQL database, for the SQL protocols (kv on MemoryKv):
//                       ratelab keeps to its own schema, `ratelab`, and cannot restart it.
//   redis://host:port/db, unix:///path.sock?db=N, redis-cluster://host:port[,host:port...]
//                       a Redis, or a Redis Cluster (impl/store/redis_cluster.h), that is
//                       already running. ratelab flushes that database before
//                       and after each run, so it must be empty when first used. Its clock is its
//                       own: scripts still get `now` as an argument, but TTLs and expiry run on
//                       real time while the simulation moves minutes in milliseconds, so keys
//                       outlive their simulated expiry, TIME is the machine's, and store restarts
//                       cannot be simulated (ratelab does not own the server). Runs say so in their
//                       notes.
//
// The steps of concurrent simulated requests reach the server one at a time, in the order the
// simulation applies them: the real server sees exactly the interleaving the seed chose.
#ifndef RATELAB_SIM_KV_BACKEND_H_
#define RATELAB_SIM_KV_BACKEND_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/state_size.h"
#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/kv.h"
#include "impl/store/postgres_server.h"
#include "impl/store/redis_server.h"
#include "impl/store/store_name.h"
#include "sim/sql_backend.h"

namespace ratelab {

// One run's kv store. Execute is the protocols' way in; the rest is the harness's.
class KvBackend : public Kv {
 public:
  // A store restart under the store's durability (kill -9 and start again, for a real server).
  virtual void Restart() = 0;
  // Live keys with no expiry, sorted.
  virtual std::vector<std::string> KeysWithoutExpiry() = 0;
  // Live keys and their payload, counted as MemoryKv::Usage counts them.
  virtual StateSize Usage() = 0;
  // The store's replica, for a failover: detached (it keeps what it had: replication lag), and
  // promoted in the master's place (MemoryKv::DetachReplica, FailOver). Unimplemented on a real
  // server: its replica is not modelled.
  enum class ReplicaEvent { kDetach, kFailOver };
  virtual Status OnReplica(ReplicaEvent event) {
    (void)event;
    return absl::UnimplementedError(
        "a failover needs the store MemoryKv (store memory), whose replica is modelled");
  }
  // The first failure of the store itself (a server that died, a lost connection), which makes
  // the run's history worthless: OK if none. Store faults the simulation injects are not these.
  virtual Status failure() const { return absl::OkStatus(); }
};

// MemoryKv on `clock`: the store of a run on `memory`, and of any limiter that keeps no kv state.
std::unique_ptr<KvBackend> OpenMemoryKv(const Clock& clock, Durability durability);

// Private servers between runs, by durability: a run takes an idle one and gives it back.
template <typename Server>
class IdleServers {
 public:
  // An idle server with `durability`, or null.
  std::unique_ptr<Server> Take(Durability durability) {
    std::lock_guard lock(mu_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->options().durability == durability) {
        std::unique_ptr<Server> s = std::move(*it);
        idle_.erase(it);
        return s;
      }
    }
    return nullptr;
  }
  void Give(std::unique_ptr<Server> server) {
    if (!server->running()) return;  // a failed restart: start afresh next time
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(server));
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Server>> idle_;
};

// Hands out the store of each run. Thread-safe: runs on several threads each get their own.
class KvStoreSource : public std::enable_shared_from_this<KvStoreSource> {
 public:
  static std::shared_ptr<KvStoreSource> Make(const StoreName& name);
  // Make from the name as text; InvalidArgument naming what is wrong with it.
  static Result<std::shared_ptr<KvStoreSource>> Make(std::string_view name);
  ~KvStoreSource();

  // An empty store for one run, on `clock` (the simulation's true time), with `durability` (a
  // private server runs with it; MemoryKv simulates it; an existing server has its own).
  Result<std::unique_ptr<KvBackend>> Open(const Clock& clock, Durability durability);
  // An empty SQL store for one run with `durability`; FailedPrecondition saying how to name one
  // when this source is not PostgreSQL.
  Result<std::unique_ptr<SqlBackend>> OpenSql(Durability durability);

  const StoreName& name() const { return name_; }
  // The name as text: "memory", "redis", or the URL.
  const std::string& where() const { return where_; }
  // Whether the kv protocols run on MemoryKv.
  bool memory() const { return name_.kind == StoreName::Kind::kMemory || sql(); }
  // Whether the source is PostgreSQL, for the SQL protocols.
  bool sql() const {
    return name_.kind == StoreName::Kind::kPrivatePostgres ||
           name_.kind == StoreName::Kind::kPostgresUrl;
  }
  // Whether ratelab starts the server (so it can restart it; a redis-server's clock then follows
  // the simulation).
  bool owns_server() const {
    return name_.kind == StoreName::Kind::kPrivateRedis ||
           name_.kind == StoreName::Kind::kPrivatePostgres;
  }
  // What a reader of a run on this store must know about it, or empty.
  std::string Note() const;

 private:
  friend class RedisBackend;
  friend class PostgresBackend;
  explicit KvStoreSource(StoreName name) : name_(std::move(name)), where_(name_.ToString()) {}
  // A private server with `durability`, idle or new.
  Result<std::unique_ptr<RedisServer>> LeaseServer(Durability durability);
  void ReturnServer(std::unique_ptr<RedisServer> server) { idle_.Give(std::move(server)); }
  // A private PostgreSQL server with `durability`, idle or new.
  Result<std::unique_ptr<PostgresServer>> LeasePostgres(Durability durability);
  void ReturnPostgres(std::unique_ptr<PostgresServer> server) {
    idle_postgres_.Give(std::move(server));
  }
  // The existing server's database, once no other run has it: whether it has yet to be
  // checked empty (then UrlCheckedEmpty once it is).
  bool LeaseUrl();
  void UrlCheckedEmpty();
  // The existing server's database: one run at a time.
  void ReturnUrl();

  const StoreName name_;
  const std::string where_;
  std::mutex mu_;
  std::condition_variable url_free_;
  bool url_busy_ = false;
  bool url_checked_empty_ = false;
  IdleServers<RedisServer> idle_;
  IdleServers<PostgresServer> idle_postgres_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_KV_BACKEND_H_
