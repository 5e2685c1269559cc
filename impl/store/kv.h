// Kv: a store with Redis semantics, spoken to one command at a time. A command is its argument
// vector, exactly as sent to Redis ({"INCR", "rl:u1"}, {"EVALSHA", sha, "1", key, ...}); the
// reply is what Redis would answer. Each Execute is atomic: it is the one store operation of a
// protocol Step (a script runs whole).
//
// Implementations: MemoryKv (in-process, embedded Lua 5.1, virtual-clock expiry), RedisKv (one
// redis-server, over hiredis) and RedisClusterKv (a Redis Cluster, routed by slot). KvWrapper
// forwards every call, so a fault injector can override one.
#ifndef RATELAB_IMPL_STORE_KV_H_
#define RATELAB_IMPL_STORE_KV_H_

#include <span>
#include <string>

#include "impl/core/status.h"
#include "impl/store/kv_reply.h"

namespace ratelab {

class Kv {
 public:
  virtual ~Kv() = default;
  // Runs one command. An error reply (WRONGTYPE, NOSCRIPT, a script error) is an OK Result
  // holding a kError reply; a non-OK Status means the store could not be reached (Unavailable)
  // or did not answer in time (DeadlineExceeded), and the command may or may not have run.
  [[nodiscard]] virtual Result<KvReply> Execute(std::span<const std::string> argv) = 0;
};

class KvWrapper : public Kv {
 public:
  explicit KvWrapper(Kv& target) : target_(target) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override {
    return target_.Execute(argv);
  }
  Kv& target() const { return target_; }

 private:
  Kv& target_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_KV_H_
