#include "live/server_stores.h"

namespace ratelab {

Result<std::shared_ptr<StoreSource>> OpenStoreSource(const StoreName& name) {
  if (name.kind == StoreName::Kind::kMemory) return MemoryStores();
  // What is wrong with the name (a URL's parameters) is said now, before any run.
  if (Result<std::unique_ptr<StoreDriver>> store = OpenStoreDriver(name); !store.ok()) {
    return store.status();
  }
  return std::shared_ptr<StoreSource>(std::make_shared<ServerStoreSource>(name));
}

Result<std::shared_ptr<StoreSource>> OpenStoreSource(std::string_view text) {
  Result<StoreName> name = StoreName::Parse(text);
  if (!name.ok()) return name.status();
  return OpenStoreSource(*name);
}

ServerStoreSource::~ServerStoreSource() = default;

Result<std::unique_ptr<StoreDriver>> ServerStoreSource::LeaseStore(Durability durability) {
  if (!owns_server()) return OpenStoreDriver(name());
  if (std::unique_ptr<StoreDriver> idle = idle_.Take(durability)) return idle;
  Result<std::unique_ptr<StoreDriver>> store =
      OpenStoreDriver(name(), {.durability = durability, .virtual_clock = true});
  if (!store.ok()) return store.status();
  if (Status s = (*store)->Start(); !s.ok()) return s;
  return store;
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
