// Redis: a private redis-server ratelab starts on a unix socket in a temp dir (with the start
// options' durability, on the machine's clock or on virtual time), or a running Redis or Redis
// Cluster by its URL. A run that requires it empty checks the database holds no key (DBSIZE) and
// flushes it after. Each thread has its own connection; overlapped, on one server, its steps go out
// in pipelines (a cluster's are each sent at once).
#include "impl/drivers/store_drivers.h"
#include "impl/store/redis_cluster.h"
#include "impl/store/redis_kv.h"
#include "impl/store/redis_pipeline.h"
#include "impl/store/redis_server.h"

namespace ratelab {

namespace {

class RedisDriver final : public ServerDriver<RedisServer, RedisServerOptions> {
 public:
  RedisDriver(StoreName name, StoreStartOptions options) : ServerDriver(std::move(name), options) {}

  bool Serves(StoreKind kind) const override { return kind == StoreKind::kKv; }
  std::string Where() const override { return "on Redis at " + url_; }

  Status Prepare(bool require_empty) override {
    if (!require_empty) return absl::OkStatus();  // Redis needs nothing made
    Result<std::unique_ptr<Kv>> admin = OpenRedisUrl(url_);
    if (!admin.ok()) return admin.status();
    admin_ = *std::move(admin);
    return RequireEmptyDatabase(*admin_, url_);
  }

  Result<StoreConnection> Connect(const StoreConnectOptions& options) const override {
    RedisOptions redis;
    if (options.timeout > Duration(0))
      redis.command_timeout = redis.connect_timeout = options.timeout;
    Result<std::unique_ptr<Kv>> opened = OpenRedisUrl(url_, redis);
    if (!opened.ok()) return opened.status();
    struct Owned {
      std::unique_ptr<Kv> kv;
      std::unique_ptr<RedisPipeline> pipeline;  // on `kv`: declared after it, closed before it
    };
    auto owned = std::make_shared<Owned>();
    owned->kv = *std::move(opened);
    StoreConnection c;
    c.kv = c.direct_kv = owned->kv.get();
    if (auto* one = dynamic_cast<RedisKv*>(owned->kv.get()); one != nullptr && options.overlapped) {
      owned->pipeline = std::make_unique<RedisPipeline>(*one);
      c.kv = c.pipeline = owned->pipeline.get();
    }
    c.owner = std::move(owned);
    return c;
  }

  void Empty() override {
    if (admin_ != nullptr) (void)admin_->Execute(std::vector<std::string>{"FLUSHDB"});
  }

  void FollowClock(Instant now) override {
    if (server_ != nullptr && server_->virtual_clock() != nullptr) {
      server_->virtual_clock()->Set(now);
    }
  }

 private:
  RedisServerOptions ServerOptions() const override {
    RedisServerOptions options;
    options.durability = start_options().durability;
    if (start_options().virtual_clock) options.virtual_clock = FromUnixNanos(0);
    return options;
  }

  std::unique_ptr<Kv> admin_;  // once required empty: to empty it after
};

}  // namespace

Result<std::unique_ptr<StoreDriver>> OpenRedisDriver(const StoreName& name,
                                                     StoreStartOptions options) {
  return std::unique_ptr<StoreDriver>(std::make_unique<RedisDriver>(name, options));
}

}  // namespace ratelab
