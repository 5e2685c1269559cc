#include "live/server_stores.h"

#include "impl/store/postgres_sql.h"

namespace ratelab {

Result<std::shared_ptr<StoreSource>> OpenStoreSource(const StoreName& name) {
  if (name.kind == StoreName::Kind::kMemory) return MemoryStores();
  if (name.kind == StoreName::Kind::kPostgresUrl) {
    if (Status s = ParsePostgresUrl(name.url); !s.ok()) return s;
  }
  return std::shared_ptr<StoreSource>(std::make_shared<ServerStoreSource>(name));
}

Result<std::shared_ptr<StoreSource>> OpenStoreSource(std::string_view text) {
  Result<StoreName> name = StoreName::Parse(text);
  if (!name.ok()) return name.status();
  return OpenStoreSource(*name);
}

ServerStoreSource::~ServerStoreSource() = default;

Result<std::unique_ptr<RedisServer>> ServerStoreSource::LeaseRedis(Durability durability) {
  if (std::unique_ptr<RedisServer> idle = idle_redis_.Take(durability)) return idle;
  RedisServerOptions options;
  options.durability = durability;
  options.virtual_clock = FromUnixNanos(0);
  return RedisServer::Start(options);
}

Result<std::unique_ptr<PostgresServer>> ServerStoreSource::LeasePostgres(Durability durability) {
  if (std::unique_ptr<PostgresServer> idle = idle_postgres_.Take(durability)) return idle;
  PostgresServerOptions options;
  options.durability = durability;
  return PostgresServer::Start(options);
}

bool ServerStoreSource::LeaseUrl() {
  std::unique_lock lock(mu_);
  url_free_.wait(lock, [this] { return !url_busy_; });
  url_busy_ = true;
  return !url_checked_empty_;
}

void ServerStoreSource::UrlCheckedEmpty() {
  std::lock_guard lock(mu_);
  url_checked_empty_ = true;
}

void ServerStoreSource::ReturnUrl() {
  {
    std::lock_guard lock(mu_);
    url_busy_ = false;
  }
  url_free_.notify_one();
}

}  // namespace ratelab
