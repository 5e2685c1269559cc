// Where a simulated run keeps its state, named as the user names it (impl/store/store_name.h):
// the kv protocols' in a kv store (KvBackend, sim/kv_backend.h) and the SQL protocols' in a SQL
// database (SqlBackend, sim/sql_backend.h). A StoreSource hands each run its own, empty.
//
//   memory              MemoryKv on the simulation's clock (the default); no SQL store, since
//                       PostgreSQL has no embedded stand-in. MemoryStores(), here.
//   redis, postgres,    real servers, private or already running: the live layer's
//   or a URL            (live/server_stores.h: OpenStoreSource), which says what each keeps and
//                       how it follows the simulation's clock.
//
// The simulator itself needs no server client: a caller that wants one opens the source and
// hands it to the run (Scenario::stores, SearchOptions::stores).
#ifndef RATELAB_SIM_STORE_SOURCE_H_
#define RATELAB_SIM_STORE_SOURCE_H_

#include <atomic>
#include <memory>
#include <string>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/store_name.h"
#include "sim/kv_backend.h"
#include "sim/sql_backend.h"

namespace ratelab {

// Hands out the stores of each run. Thread-safe: runs on several threads each get their own.
class StoreSource {
 public:
  virtual ~StoreSource() = default;
  StoreSource(const StoreSource&) = delete;
  StoreSource& operator=(const StoreSource&) = delete;

  // An empty kv store for one run, on `clock` (the simulation's true time), with `durability`
  // (a private server runs with it; MemoryKv simulates it; an existing server has its own).
  virtual Result<std::unique_ptr<KvBackend>> Open(const Clock& clock, Durability durability) = 0;
  // An empty SQL store for one run with `durability`; FailedPrecondition saying how to name one
  // when this source is not PostgreSQL.
  virtual Result<std::unique_ptr<SqlBackend>> OpenSql(Durability durability) = 0;

  const StoreName& name() const { return name_; }
  // The name as text: "memory", "redis", or the URL.
  const std::string& where() const { return where_; }
  // Whether the kv protocols run on MemoryKv.
  bool memory() const { return name_.kind == StoreName::Kind::kMemory || sql(); }
  // Whether the source is PostgreSQL, for the SQL protocols.
  bool sql() const { return name_.postgres(); }
  // Whether ratelab starts the server (so it can restart it; a redis-server's clock then follows
  // the simulation).
  bool owns_server() const { return name_.owns_server(); }
  // What a reader of a run on this store must know about it, or empty.
  std::string Note() const;

 protected:
  explicit StoreSource(StoreName name) : name_(std::move(name)), where_(name_.ToString()) {}

 private:
  const StoreName name_;
  const std::string where_;
};

// The source of runs on MemoryKv, with no SQL store. `stop`: once set (a user's Ctrl-C), a
// script running on any of its stores ends at once (LuaBudget::stop); none: never.
std::shared_ptr<StoreSource> MemoryStores(const std::atomic<int>* stop = nullptr);

// Why a SQL protocol cannot run on a source that is not PostgreSQL.
Status NoSqlStore();

}  // namespace ratelab

#endif  // RATELAB_SIM_STORE_SOURCE_H_
