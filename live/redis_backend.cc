#include <algorithm>

#include "impl/store/redis_kv.h"
#include "live/server_stores.h"

namespace ratelab {

namespace {

using Argv = std::vector<std::string>;

class RedisBackend final : public KvBackend {
 public:
  // On `store`, leased from `source` (a private server, or the running one, a server or a
  // cluster), through `connection`, a connection of its own to it.
  RedisBackend(std::shared_ptr<ServerStoreSource> source, std::unique_ptr<StoreDriver> store,
               StoreConnection connection, const Clock& clock)
      : source_(std::move(source)),
        store_(std::move(store)),
        owned_(store_->name().owns_server()),
        connection_(std::move(connection)),
        clock_(clock) {}
  ~RedisBackend() override {
    if (owned_) {
      connection_ = {};
      source_->ReturnServer(std::move(store_));
    } else {
      // Leave the database as it was found: empty. (Only once it was found empty: a database
      // holding someone's keys is never touched.)
      if (owns_database_) (void)connection_.kv->Execute(std::vector<std::string>{"FLUSHDB"});
      source_->ReturnUrl();
    }
  }

  Result<KvReply> Execute(std::span<const std::string> argv) override {
    store_->FollowClock(clock_.Now());
    Result<KvReply> r = connection_.kv->Execute(argv);
    if (!r.ok() && failure_.ok()) failure_ = r.status();
    return r;
  }

  void Restart() override {
    Fail(store_->Restart());
    if (owned_) {  // the next command connects to the new process
      Result<StoreConnection> reconnected = store_->Connect({});
      if (reconnected.ok()) connection_ = *std::move(reconnected);
      Fail(reconnected.status());
    }
  }

  std::vector<std::string> KeysWithoutExpiry() override {
    std::vector<std::string> out;
    for (const std::string& key : Keys()) {
      if (Run({"PTTL", key}).integer == -1) out.push_back(key);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  StateSize Usage() override {
    StateSize s;
    for (const std::string& key : Keys()) {
      const std::string type = Run({"TYPE", key}).text;
      int64_t bytes = static_cast<int64_t>(key.size());
      if (type == "string") {
        bytes += static_cast<int64_t>(Run({"GET", key}).text.size());
      } else if (type == "hash") {
        for (const KvReply& r : Run({"HGETALL", key}).elements) {
          bytes += static_cast<int64_t>(r.text.size());
        }
      } else if (type == "zset") {
        for (const KvReply& member : Run({"ZRANGE", key, "0", "-1"}).elements) {
          bytes += static_cast<int64_t>(member.text.size() + sizeof(double));
        }
      } else {
        continue;  // gone since the scan
      }
      ++s.keys;
      s.bytes += bytes;
    }
    return s;
  }

  Status failure() const override { return failure_; }

  // Empties the store for a new run, once it is known to be ratelab's.
  Status Reset(bool whole_server) {
    owns_database_ = true;
    const std::vector<Argv> commands = whole_server
                                           ? std::vector<Argv>{{"FLUSHALL"}, {"SCRIPT", "FLUSH"}}
                                           : std::vector<Argv>{{"FLUSHDB"}};
    for (const Argv& c : commands) {
      Result<KvReply> r = Execute(c);
      if (!r.ok()) return r.status();
      if (r->is_error())
        return absl::InternalError(c[0] + " failed on " + source_->where() + ": " + r->text);
    }
    return absl::OkStatus();
  }

 private:
  void Fail(const Status& s) {
    if (!s.ok() && failure_.ok()) failure_ = s;
  }
  // A command of the harness's own; a failure is recorded and reads as nil.
  KvReply Run(Argv argv) {
    Result<KvReply> r = Execute(argv);
    return r.ok() ? *std::move(r) : KvReply::Nil();
  }
  // Every key (of every master, on a cluster). KEYS, not SCAN: the database is the run's own,
  // and small.
  std::vector<std::string> Keys() {
    std::vector<std::string> keys;
    for (const KvReply& k : Run({"KEYS", "*"}).elements) keys.push_back(k.text);
    return keys;
  }

  std::shared_ptr<ServerStoreSource> source_;
  std::unique_ptr<StoreDriver> store_;
  const bool owned_;  // a private server, leased
  // Its kv: on one server, a RedisKv; on a cluster's URL, a RedisClusterKv.
  StoreConnection connection_;
  const Clock& clock_;
  Status failure_;
  bool owns_database_ = false;
};

}  // namespace

Result<std::unique_ptr<KvBackend>> ServerStoreSource::Open(const Clock& clock,
                                                           Durability durability) {
  if (memory()) return OpenMemoryKv(clock, durability);
  Result<std::unique_ptr<StoreDriver>> store = LeaseStore(durability);
  if (!store.ok()) return store.status();
  Result<StoreConnection> connection = (*store)->Connect({});
  if (!connection.ok()) return connection.status();
  if (owns_server()) {
    auto backend = std::make_unique<RedisBackend>(shared_from_this(), *std::move(store),
                                                  *std::move(connection), clock);
    if (Status s = backend->Reset(true); !s.ok()) return s;
    return std::unique_ptr<KvBackend>(std::move(backend));
  }
  const bool check_empty = LeaseUrl();
  auto backend = std::make_unique<RedisBackend>(shared_from_this(), *std::move(store),
                                                *std::move(connection), clock);
  if (check_empty) {
    if (Status s = RequireEmptyDatabase(*backend, where()); !s.ok()) return s;
    UrlCheckedEmpty();
  }
  if (Status s = backend->Reset(false); !s.ok()) return s;
  return std::unique_ptr<KvBackend>(std::move(backend));
}

}  // namespace ratelab
