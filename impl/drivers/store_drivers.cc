#include "impl/drivers/store_drivers.h"

namespace ratelab {

namespace {

struct DriverRow {
  StoreName::Kind kind;
  OpenDriver open;
};

// Every kind of store, with its driver.
constexpr DriverRow kDrivers[] = {
    {StoreName::Kind::kMemory, OpenMemoryDriver},
    {StoreName::Kind::kPrivateRedis, OpenRedisDriver},
    {StoreName::Kind::kUrl, OpenRedisDriver},
    {StoreName::Kind::kPrivatePostgres, OpenPostgresDriver},
    {StoreName::Kind::kPostgresUrl, OpenPostgresDriver},
};

}  // namespace

Result<std::unique_ptr<StoreDriver>> OpenStoreDriver(const StoreName& name,
                                                     StoreStartOptions options) {
  for (const DriverRow& row : kDrivers) {
    if (row.kind == name.kind) return row.open(name, options);
  }
  return absl::InvalidArgumentError("no driver for the store " + name.ToString());
}

}  // namespace ratelab
