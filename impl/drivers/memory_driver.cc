// The in-process store: state in this process. Its in-process protocols keep their own (one
// instance every thread calls); with a clock, it holds one MemoryKv and one MemoryDocs as well,
// on that clock, which every thread's connection shares, each command (a script included) run
// whole before the next, as a single-threaded server runs them. There is nothing to start; it
// starts empty, and Empty gives the connections made after it new, empty stores.
#include <mutex>

#include "impl/drivers/store_drivers.h"
#include "impl/store/memory_docs.h"
#include "impl/store/memory_kv.h"

namespace ratelab {

namespace {

// The shared stores, and the lock their commands take turns on.
struct SharedStores {
  explicit SharedStores(const Clock& clock) : kv(clock), docs(clock) {}
  std::mutex mu;
  MemoryKv kv;
  MemoryDocs docs;
};

class LockedKv final : public Kv {
 public:
  explicit LockedKv(std::shared_ptr<SharedStores> stores) : stores_(std::move(stores)) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override {
    std::lock_guard lock(stores_->mu);
    return stores_->kv.Execute(argv);
  }

 private:
  std::shared_ptr<SharedStores> stores_;
};

class LockedDocs final : public Docs {
 public:
  explicit LockedDocs(std::shared_ptr<SharedStores> stores) : stores_(std::move(stores)) {}
  Result<Document> Execute(const Document& command) override {
    std::lock_guard lock(stores_->mu);
    return stores_->docs.Execute(command);
  }

 private:
  std::shared_ptr<SharedStores> stores_;
};

class MemoryDriver final : public StoreDriver {
 public:
  MemoryDriver(StoreName name, StoreStartOptions options) : StoreDriver(std::move(name), options) {
    if (options.clock != nullptr) stores_ = std::make_shared<SharedStores>(*options.clock);
  }
  Status Start() override { return absl::OkStatus(); }
  bool Serves(StoreKind kind) const override { return kind != StoreKind::kSql; }
  std::string address() const override { return ""; }
  std::string Where() const override { return "in process"; }
  Status Prepare(bool) override { return absl::OkStatus(); }
  Result<StoreConnection> Connect(const StoreConnectOptions&) const override {
    if (stores_ == nullptr) {
      return absl::FailedPreconditionError(
          "the in-process store holds kv and document stores only on a clock (StoreStartOptions)");
    }
    struct Owned {
      LockedKv kv;
      LockedDocs docs;
    };
    auto owned = std::make_shared<Owned>(Owned{LockedKv(stores_), LockedDocs(stores_)});
    StoreConnection c;
    c.kv = c.direct_kv = &owned->kv;
    c.docs = &owned->docs;
    c.owner = std::move(owned);
    return c;
  }
  // What a request tried before the run wrote (stress's TryOnce) must not be there when it
  // starts, as Redis is flushed: the connections made from now on get new, empty stores (those
  // made before keep the old ones until they close).
  void Empty() override {
    if (stores_ != nullptr) stores_ = std::make_shared<SharedStores>(*start_options().clock);
  }

 private:
  std::shared_ptr<SharedStores> stores_;  // with a clock
};

}  // namespace

Result<std::unique_ptr<StoreDriver>> OpenMemoryDriver(const StoreName& name,
                                                      StoreStartOptions options) {
  return std::unique_ptr<StoreDriver>(std::make_unique<MemoryDriver>(name, options));
}

}  // namespace ratelab
