#include "sim/store_source.h"

namespace ratelab {

namespace {

class MemoryStoreSource final : public StoreSource {
 public:
  explicit MemoryStoreSource(const std::atomic<int>* stop)
      : StoreSource(StoreName{}), lua_cache_(std::make_shared<LuaCache>(stop)) {}
  Result<std::unique_ptr<KvBackend>> Open(const Clock& clock, Durability durability) override {
    return OpenMemoryKv(clock, durability, lua_cache_);
  }

 private:
  // Each run's store is new, with a Lua state that compiles the scripts of the runs before it
  // again: scripts are compiled once for every run of this source, and a state made once is
  // made new again for the next store (LuaCache).
  std::shared_ptr<LuaCache> lua_cache_;
  Result<std::unique_ptr<SqlBackend>> OpenSql(Durability) override { return NoSqlStore(); }
};

}  // namespace

std::shared_ptr<StoreSource> MemoryStores(const std::atomic<int>* stop) {
  return std::make_shared<MemoryStoreSource>(stop);
}

Status NoSqlStore() {
  return absl::FailedPreconditionError(
      "the SQL protocols run on PostgreSQL, which has no embedded stand-in: pass --store "
      "postgres (a private server ratelab starts) or --store postgresql://... (a database of "
      "yours), or set the scenario's store to one of them");
}

std::string StoreSource::Note() const {
  if (name_.kind == StoreName::Kind::kPrivatePostgres) {
    return "the SQL protocols ran on a private PostgreSQL server, time passed to them as a "
           "parameter; a store restart there is a kill -9 of every server process and a restart";
  }
  if (name_.kind == StoreName::Kind::kPostgresUrl) {
    return "the SQL protocols ran on the PostgreSQL database at " + where_ +
           ", time passed to them as a parameter";
  }
  if (memory()) return "";
  if (owns_server()) {
    return "the kv protocols ran on a private redis-server on virtual time; a store restart there "
           "is a kill -9 and a restart";
  }
  return "the kv protocols ran on the Redis at " + where_ +
         ", which is not on virtual time: scripts got the simulated time as an argument, but its "
         "TIME and key expiry followed its own clock, so keys outlived their simulated expiry";
}

}  // namespace ratelab
