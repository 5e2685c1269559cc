// The drivers of the stores the live runtimes run on (impl/store/store_driver.h says what a
// driver is), one file each, opened from a store's name here: the one place that maps a kind of
// store to its driver.
//
//   memory_driver.cc    the in-process store: nothing to start or connect to
//   redis_driver.cc     a private redis-server ratelab starts, or a running Redis or Redis
//                       Cluster by its URL
//   postgres_driver.cc  a private PostgreSQL server ratelab starts, or a running database by its
//                       URL, with ratelab's tables (impl/limiters/sql_protocols.h) in it
//
// Adding a kind of store: its row in impl/store/store_name.cc, its driver file here, and its
// line in kDrivers (store_drivers.cc).
#ifndef RATELAB_IMPL_DRIVERS_STORE_DRIVERS_H_
#define RATELAB_IMPL_DRIVERS_STORE_DRIVERS_H_

#include <memory>

#include "impl/core/status.h"
#include "impl/store/store_driver.h"

namespace ratelab {

// The driver of the store named `name`, not yet started, a private server to start with
// `options`; InvalidArgument naming what is wrong with a URL's parameters.
Result<std::unique_ptr<StoreDriver>> OpenStoreDriver(const StoreName& name,
                                                     StoreStartOptions options = {});

// Each kind's driver (its own file).
using OpenDriver = Result<std::unique_ptr<StoreDriver>> (*)(const StoreName& name,
                                                            StoreStartOptions options);
Result<std::unique_ptr<StoreDriver>> OpenMemoryDriver(const StoreName& name,
                                                      StoreStartOptions options);
Result<std::unique_ptr<StoreDriver>> OpenRedisDriver(const StoreName& name,
                                                     StoreStartOptions options);
Result<std::unique_ptr<StoreDriver>> OpenPostgresDriver(const StoreName& name,
                                                        StoreStartOptions options);

}  // namespace ratelab

#endif  // RATELAB_IMPL_DRIVERS_STORE_DRIVERS_H_
