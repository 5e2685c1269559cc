// The stores of simulated runs on real servers (sim/store_source.h says what a StoreSource is).
//
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
//
// In PostgreSQL the tables are the SQL protocols' (impl/limiters/sql_protocols.h: SqlTables), in
// the schema `ratelab`, created once per database and emptied (TRUNCATE) before each run; with
// durability none they are UNLOGGED, so a restart loses every row. In an existing database,
// ratelab touches nothing outside that schema, and refuses to start when its tables hold rows it
// did not write.
#ifndef RATELAB_LIVE_SERVER_STORES_H_
#define RATELAB_LIVE_SERVER_STORES_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/drivers/store_drivers.h"
#include "impl/store/store_name.h"
#include "sim/store_source.h"

namespace ratelab {

// The stores named `name`: MemoryStores() for memory, else the servers it names. InvalidArgument
// naming what is wrong with a PostgreSQL URL's parameters.
Result<std::shared_ptr<StoreSource>> OpenStoreSource(const StoreName& name);
// The same from the name as text; InvalidArgument naming what is wrong with it.
Result<std::shared_ptr<StoreSource>> OpenStoreSource(std::string_view name);

// Private servers between runs (their drivers), by durability: a run takes an idle one and gives
// it back.
class IdleServers {
 public:
  // An idle server with `durability`, or null.
  std::unique_ptr<StoreDriver> Take(Durability durability) {
    std::lock_guard lock(mu_);
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if ((*it)->start_options().durability == durability) {
        std::unique_ptr<StoreDriver> s = std::move(*it);
        idle_.erase(it);
        return s;
      }
    }
    return nullptr;
  }
  void Give(std::unique_ptr<StoreDriver> server) {
    if (!server->running()) return;  // a failed restart: start afresh next time
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(server));
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<StoreDriver>> idle_;
};

// A store on a real server: Redis for the kv protocols (live/redis_backend.cc), PostgreSQL for
// the SQL ones (live/postgres_backend.cc), each through its driver (impl/drivers). Its backends
// lease private servers from it and give them back.
class ServerStoreSource final : public StoreSource,
                                public std::enable_shared_from_this<ServerStoreSource> {
 public:
  explicit ServerStoreSource(StoreName name) : StoreSource(std::move(name)) {}
  ~ServerStoreSource() override;

  Result<std::unique_ptr<KvBackend>> Open(const Clock& clock, Durability durability) override;
  Result<std::unique_ptr<SqlBackend>> OpenSql(Durability durability) override;

  // The store of one run: a private server with `durability` (on virtual time), idle or new
  // and started, which ReturnServer takes back; or the running store's driver.
  Result<std::unique_ptr<StoreDriver>> LeaseStore(Durability durability);
  void ReturnServer(std::unique_ptr<StoreDriver> server) { idle_.Give(std::move(server)); }
  // The existing server's database, once no other run has it: whether it has yet to be
  // checked empty (then UrlCheckedEmpty once it is).
  bool LeaseUrl();
  void UrlCheckedEmpty();
  // The existing server's database: one run at a time.
  void ReturnUrl();

 private:
  std::mutex mu_;
  std::condition_variable url_free_;
  bool url_busy_ = false;
  bool url_checked_empty_ = false;
  IdleServers idle_;
};

}  // namespace ratelab

#endif  // RATELAB_LIVE_SERVER_STORES_H_
