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

// What the drivers of a server ratelab may start itself share (RedisServer, PostgresServer): the
// private server, started once with the options ServerOptions makes of the start options, or a
// running one at its URL; a restart, which only the private one has.
template <typename Server, typename Options>
class ServerDriver : public StoreDriver {
 public:
  Status Start() override {
    if (!name().owns_server() || server_ != nullptr) return absl::OkStatus();
    Result<std::unique_ptr<Server>> started = Server::Start(ServerOptions());
    if (!started.ok()) return started.status();
    server_ = *std::move(started);
    url_ = server_->url();
    return absl::OkStatus();
  }
  std::string address() const override { return url_; }
  Status Restart() override { return server_ != nullptr ? server_->Restart() : CannotRestart(); }
  bool running() const override { return server_ == nullptr || server_->running(); }

 protected:
  ServerDriver(StoreName name, StoreStartOptions options)
      : StoreDriver(std::move(name), options), url_(this->name().url) {}
  virtual Options ServerOptions() const = 0;

  std::string url_;                 // the private server's, once started, or the running one's
  std::unique_ptr<Server> server_;  // a private one
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_DRIVERS_STORE_DRIVERS_H_
