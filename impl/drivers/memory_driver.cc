// The in-process store: each protocol keeps its state in this process, so there is nothing to
// start, ready, connect to or empty.
#include "impl/drivers/store_drivers.h"

namespace ratelab {

namespace {

class MemoryDriver final : public StoreDriver {
 public:
  MemoryDriver(StoreName name, StoreStartOptions options) : StoreDriver(std::move(name), options) {}
  Status Start() override { return absl::OkStatus(); }
  std::string address() const override { return ""; }
  std::string Where() const override { return "in process"; }
  Status Prepare(bool) override { return absl::OkStatus(); }
  Result<StoreConnection> Connect(const StoreConnectOptions&) const override {
    return StoreConnection{};
  }
  void Empty() override {}
};

}  // namespace

Result<std::unique_ptr<StoreDriver>> OpenMemoryDriver(const StoreName& name,
                                                      StoreStartOptions options) {
  return std::unique_ptr<StoreDriver>(std::make_unique<MemoryDriver>(name, options));
}

}  // namespace ratelab
