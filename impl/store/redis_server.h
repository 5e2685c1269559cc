// A private redis-server (Debian's), for tests, benchmarks and `--store redis`: started on a unix
// socket in a fresh temp dir, with the durability asked for, and stopped, killed (-9) and
// restarted on the same data dir at will. The destructor kills it and removes the dir; what a
// process killed outright leaves behind, the next Start removes (RemoveAbandonedServers).
//
// Durability, as Redis configures it:
//   none      --save "" --appendonly no            a restart loses everything
//   everysec  --appendonly yes --appendfsync everysec
//   always    --appendonly yes --appendfsync always
// A kill -9 of the server process loses nothing that Redis wrote to its append-only file: the
// kernel still holds the written pages. Under always, Redis writes before it answers, so a kill
// loses nothing. Under everysec it may hold writes back while a background fsync runs, so a kill
// loses those, and which they are depends on the machine's timing: everysec restarts of a real
// server are not reproducible. (MemoryKv's everysec models a crash of the whole machine, which
// loses the last second.)
//
// Virtual time: with `virtual_clock` set, the server runs with virtual_time_shim (LD_PRELOAD), so
// its wall clock (TIME, key expiry, TTLs) is whatever the VirtualClock says, moved by the
// simulator before each command.
#ifndef RATELAB_IMPL_STORE_REDIS_SERVER_H_
#define RATELAB_IMPL_STORE_REDIS_SERVER_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/store/durability.h"
#include "impl/store/redis_kv.h"
#include "impl/store/server_process.h"

namespace ratelab {

// The virtual wall clock of a redis-server run under virtual_time_shim: an 8-byte file of unix
// nanoseconds, mapped in both processes. Set() before a command is the time that command sees.
class VirtualClock {
 public:
  // Creates (or truncates) the file at `path`, reading `start`.
  static Result<std::unique_ptr<VirtualClock>> Create(const std::string& path, Instant start);
  ~VirtualClock();
  VirtualClock(const VirtualClock&) = delete;
  VirtualClock& operator=(const VirtualClock&) = delete;

  void Set(Instant now);
  const std::string& path() const { return path_; }

 private:
  VirtualClock(std::string path, int64_t* mapped) : path_(std::move(path)), now_ns_(mapped) {}
  std::string path_;
  int64_t* now_ns_;
};

struct RedisServerOptions {
  Durability durability = Durability::kNone;
  // Run on a virtual wall clock starting here (see VirtualClock); nullopt: the machine's clock.
  std::optional<Instant> virtual_clock;
  // Also listen on this loopback TCP port (0: the unix socket only).
  int port = 0;
  // More redis-server arguments, e.g. {"--cluster-enabled", "yes"}.
  std::vector<std::string> extra_args;
};

class RedisServer {
 public:
  // Starts redis-server and waits until it answers PING. NotFound if redis-server is not on PATH
  // (Debian package redis-server); Unavailable with the end of its log if it does not come up.
  static Result<std::unique_ptr<RedisServer>> Start(RedisServerOptions options);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // SIGTERM, and wait for it to exit (Redis flushes its append-only file first).
  Status Stop();
  // SIGKILL, and wait: nothing gets flushed.
  Status Kill();
  // Kill, then start again on the same data dir, socket and port.
  Status Restart();
  // Start again after Stop or Kill.
  Status Launch();
  // Stops every server process (SIGSTOP to its group), as a stalled machine would: connections
  // stay open and nothing is answered, until Resume (SIGCONT).
  Status Pause();
  Status Resume();
  bool running() const { return pid_ > 0; }

  RedisEndpoint endpoint(int db = 0) const;
  std::string url(int db = 0) const { return endpoint(db).Url(); }
  const std::string& dir() const { return dir_; }
  const RedisServerOptions& options() const { return options_; }
  // The virtual clock, if the server runs on one.
  VirtualClock* virtual_clock() const { return clock_.get(); }

 private:
  RedisServer(RedisServerOptions options, std::string dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}
  Status WaitUntilUp();
  Status Signal(int signal);

  RedisServerOptions options_;
  std::string dir_;
  std::unique_ptr<VirtualClock> clock_;
  std::string shim_;  // the virtual-time shim preloaded with `clock_` (ShimPath)
  pid_t pid_ = -1;
};

// The redis-server arguments for `durability`.
std::vector<std::string> RedisDurabilityArgs(Durability durability);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_REDIS_SERVER_H_
