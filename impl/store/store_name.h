// Where state that must outlive a request lives, as a user names it (--store, a scenario's
// `store`): "memory", "redis" (a private redis-server that ratelab starts), the URL of a running
// Redis or Redis Cluster, "postgres" (a private PostgreSQL server) or a postgresql:// URL.
#ifndef RATELAB_IMPL_STORE_STORE_NAME_H_
#define RATELAB_IMPL_STORE_STORE_NAME_H_

#include <string>
#include <string_view>

#include "impl/core/status.h"

namespace ratelab {

// Where a protocol keeps its state: in process memory, or in a store of one of three kinds.
enum class StoreKind { kMemory, kKv, kDocs, kSql };

struct StoreName {
  enum class Kind { kMemory, kPrivateRedis, kUrl, kPrivatePostgres, kPostgresUrl };
  Kind kind = Kind::kMemory;
  std::string url;  // kUrl and kPostgresUrl only

  // InvalidArgument naming what is wrong with a URL.
  static Result<StoreName> Parse(std::string_view text);
  // As Parse reads it.
  std::string ToString() const;
  // In words: "MemoryKv", "a private redis-server", or the URL.
  std::string Describe() const;
  bool operator==(const StoreName&) const = default;

  // What the store is, each answered by its kind's row (store_name.cc), the one place that
  // says: a Redis (private or at a URL), where the kv protocols keep their state; a PostgreSQL
  // server, where the SQL protocols keep theirs; one ratelab starts itself (and so can restart,
  // and whose clock can follow a simulation). Every other protocol, and the kv ones on a
  // PostgreSQL server, keep their state in ratelab's own memory.
  bool redis() const;
  bool postgres() const;
  bool owns_server() const;
  // Whether ratelab can restart the state the kv protocols (`kv`) and the SQL protocols (`sql`)
  // keep here: not where it lives on a server ratelab did not start.
  bool CanRestart(bool kv, bool sql) const;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_STORE_NAME_H_
