// A store as the live runtimes use it (`ratelab stress`'s threads, `ratelab serve`'s): found or
// started, readied, connected to by each thread, and emptied after. This interface links no
// client; the drivers of each kind of store (impl/drivers: the in-process one, Redis and Redis
// Cluster, PostgreSQL, private servers or running ones) do, and the simulator links none of them.
// What a kind of store is (whether ratelab starts it, can restart it, keeps the kv or the SQL
// protocols' state there) is its row in store_name.cc; how it is opened is its driver.
#ifndef RATELAB_IMPL_STORE_STORE_DRIVER_H_
#define RATELAB_IMPL_STORE_STORE_DRIVER_H_

#include <memory>
#include <string>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/store/docs.h"
#include "impl/store/durability.h"
#include "impl/store/kv.h"
#include "impl/store/sql.h"
#include "impl/store/store_name.h"
#include "model/time.h"

namespace ratelab {

class RedisPipeline;
class PostgresPool;

// How a private server is started; a running store is as it is.
struct StoreStartOptions {
  // What a restart of the private server keeps.
  Durability durability = Durability::kNone;
  // A private redis-server's wall clock on virtual time (RedisServer's VirtualClock), which
  // FollowClock sets: a simulated run's TIME, TTLs and expiry then follow the simulation.
  bool virtual_clock = false;
  // The in-process store's clock, which its kv and document stores read (stress's wall clock);
  // none: it holds none, and cannot be connected to (serve's in-process limiters keep their
  // own state).
  const Clock* clock = nullptr;
};

// What a thread asks of its connection.
struct StoreConnectOptions {
  // Each command's and each connecting's longest wait; zero: the client's own.
  Duration timeout{};
  // The thread's steps handed over to be decided later, so that it goes on reading while the
  // store answers (serve): in pipelines on one Redis server, on a pool of `connections` on
  // PostgreSQL. Otherwise each step is sent and answered at once (stress).
  bool overlapped = false;
  int connections = 1;
};

// One thread's connection to a store: what the protocols use, and what keeps it open.
struct StoreConnection {
  Kv* kv = nullptr;      // what the kv protocols use (a pipeline, when overlapped on one Redis)
  Docs* docs = nullptr;  // what the document protocols use
  Sql* sql = nullptr;    // what the SQL protocols use (the pool, when overlapped)
  // The connection itself, asked at once even when `kv` is a pipeline (a PING at start).
  Kv* direct_kv = nullptr;
  // When overlapped, the one that decides the thread's steps later: a pipeline on one Redis
  // server (none on a Redis Cluster, where each step is sent at once), a pool on PostgreSQL.
  RedisPipeline* pipeline = nullptr;
  PostgresPool* pool = nullptr;
  std::shared_ptr<void> owner;  // holds the above open
};

class StoreDriver {
 public:
  virtual ~StoreDriver() = default;
  StoreDriver(const StoreDriver&) = delete;
  StoreDriver& operator=(const StoreDriver&) = delete;

  const StoreName& name() const { return name_; }
  const StoreStartOptions& start_options() const { return start_options_; }

  // Starts the private server ratelab runs (a second call does nothing); nothing for a running
  // store, whose address was checked when its driver was opened (OpenStoreDriver).
  virtual Status Start() = 0;
  // Whether the protocols that keep their state in a `kind` of store can keep it here, shared
  // by every thread: in process, the in-process protocols (one instance every thread calls),
  // and the kv and document ones (on a MemoryKv and a MemoryDocs every thread's commands take
  // turns on, with a clock); on Redis the kv ones; on PostgreSQL the SQL ones.
  virtual bool Serves(StoreKind kind) const = 0;
  // Where to connect, once started: a URL (empty in process).
  virtual std::string address() const = 0;
  // Where the state lives, in words: "in process", "on Redis at redis://...", "in PostgreSQL
  // at postgresql://...".
  virtual std::string Where() const = 0;
  // Readies ratelab's state there: makes its tables (PostgreSQL). With `require_empty`, a store
  // that already holds state (any key of a Redis database, any row of ratelab's tables) is
  // refused (FailedPrecondition saying how to give an empty one), and ratelab's tables emptied.
  virtual Status Prepare(bool require_empty) = 0;
  // A thread's own connection. Thread-safe: each thread connects itself.
  virtual Result<StoreConnection> Connect(const StoreConnectOptions& options) const = 0;
  // Empties what ratelab wrote there (after a run that required it empty); best effort.
  virtual void Empty() = 0;

  // A store restart: the private server killed outright (kill -9) and started again at the same
  // address, keeping what its durability keeps; a connection made before it connects again at
  // its next command, or is made anew. FailedPrecondition for a store ratelab did not start.
  virtual Status Restart() { return CannotRestart(); }
  // False once a private server's restart failed: the driver is of no further use.
  virtual bool running() const { return true; }
  // Sets a private server's wall clock on virtual time (StoreStartOptions::virtual_clock) to
  // `now`, before each command of a simulated run; nothing for any other store.
  virtual void FollowClock(Instant) {}

  // Why this store cannot be restarted: ratelab did not start it.
  Status CannotRestart() const {
    return absl::FailedPreconditionError("cannot restart " + name_.ToString() +
                                         ": ratelab did not start it");
  }

 protected:
  StoreDriver(StoreName name, StoreStartOptions options)
      : name_(std::move(name)), start_options_(options) {}

 private:
  const StoreName name_;
  const StoreStartOptions start_options_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_STORE_DRIVER_H_
