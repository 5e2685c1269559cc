// Redis Cluster: the Kv interface over a cluster's masters, routing each command by the hash
// slot of its keys (hiredis 0.14 has no cluster support, so the routing is here).
//
// Where: `redis-cluster://host:port[,host:port...]`, any of the cluster's nodes (TCP: a cluster
// announces its nodes by address). The slot map comes from CLUSTER SLOTS on first use.
//
// Routing:
//   - A command's keys (KeysOf) must share one slot (else the reply is Redis's own CROSSSLOT
//     error) and it goes to the master that owns that slot. The protocols' keys carry a hash tag,
//     `rl:{<limiter key>}...`, so all the keys of one limiter key share a slot.
//   - MOVED: the slot has a new owner. The map is read again and the command sent there.
//   - ASK: the slot is migrating and this key has moved already: the command goes to the node
//     named, once, after ASKING; the map is not changed.
//   Redirects are followed up to 5 times; a command that got a redirect did not run, so
//   following one never runs it twice. Nothing else is retried: after an I/O error the command
//   fails (Unavailable or DeadlineExceeded, as RedisKv) and the map is read again before the
//   next one.
//   - Commands without keys that concern the whole store run on every master and their replies
//     are combined, so the cluster answers like one Redis: FLUSHALL, FLUSHDB and SCRIPT (the
//     first error, else the first reply), DBSIZE (the sum), KEYS (every master's keys). Other
//     keyless commands (TIME, PING) go to one master.
//
// Not thread-safe: give each thread its own.
#ifndef RATELAB_IMPL_STORE_REDIS_CLUSTER_H_
#define RATELAB_IMPL_STORE_REDIS_CLUSTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/kv.h"
#include "impl/store/redis_kv.h"

namespace ratelab {

inline constexpr int kClusterSlots = 16384;

// CRC16/XMODEM, the checksum Redis Cluster hashes keys with: Crc16("123456789") == 0x31C3.
uint16_t Crc16(std::string_view data);
// The slot of `key`: of its hash tag (what lies between the first '{' and the first '}' after
// it, when that is not empty), else of the whole key.
int KeySlot(std::string_view key);
// The keys of a command as Redis Cluster routes it: EVAL/EVALSHA's KEYS, every argument of
// DEL/EXISTS/MGET/UNLINK/TOUCH/WATCH, none for server commands (TIME, PING, DBSIZE, FLUSHALL,
// FLUSHDB, KEYS, SCAN, SCRIPT, INFO, ...), else the first argument.
std::vector<std::string_view> KeysOf(std::span<const std::string> argv);

// A client for any Redis URL: RedisKv for redis:// and unix://, RedisClusterKv for
// redis-cluster://. InvalidArgument naming what is wrong with the URL. Connects on first use.
Result<std::unique_ptr<Kv>> OpenRedisUrl(std::string_view url, RedisOptions options = {});

class RedisClusterKv final : public Kv {
 public:
  explicit RedisClusterKv(std::vector<RedisEndpoint> seeds, RedisOptions options = {});
  ~RedisClusterKv() override;

  Result<KvReply> Execute(std::span<const std::string> argv) override;

  // Reads the slot map (CLUSTER SLOTS) from the first node that answers.
  Status Refresh();
  // The masters that own slots, in the order of the map's first slot of each.
  std::vector<RedisEndpoint> Masters();
  // The master that owns `slot` in the map as last read (nullopt: none does).
  std::optional<RedisEndpoint> Owner(int slot);

  struct Counters {
    int64_t moved = 0;      // MOVED redirects followed
    int64_t ask = 0;        // ASK redirects followed
    int64_t refreshes = 0;  // times the slot map was read
  };
  const Counters& counters() const { return counters_; }

 private:
  struct Node {
    RedisEndpoint endpoint;
    std::unique_ptr<RedisKv> kv;
  };
  // The node at host:port, connecting on first use.
  Node& NodeAt(const std::string& host, int port);
  // The owners in the map as last read, each once, in the order of their first slot.
  std::vector<Node*> MasterNodes() const;
  Result<KvReply> OnSlot(int slot, std::span<const std::string> argv);
  Result<KvReply> OnEveryMaster(std::span<const std::string> argv);
  Status EnsureMap();

  std::vector<RedisEndpoint> seeds_;
  RedisOptions options_;
  std::map<std::string, Node> nodes_;  // by "host:port"
  std::vector<Node*> slots_;           // owner of each slot; null: unknown
  bool stale_ = true;
  Counters counters_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_REDIS_CLUSTER_H_
