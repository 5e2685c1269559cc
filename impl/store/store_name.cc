#include "impl/store/store_name.h"

#include <vector>

#include "impl/store/redis_url.h"

namespace ratelab {

namespace {

// Each kind of store, one row: the word that names it (none: a URL names it), what it is in a
// sentence (none: its URL), and what it is.
struct StoreRow {
  StoreName::Kind kind;
  std::string_view word;
  std::string_view words;
  bool redis;
  bool postgres;
  bool owned;  // ratelab starts the server
};
constexpr StoreRow kStores[] = {
    {StoreName::Kind::kMemory, "memory", "the in-memory store", false, false, false},
    {StoreName::Kind::kPrivateRedis, "redis", "a private redis-server", true, false, true},
    {StoreName::Kind::kUrl, "", "", true, false, false},
    {StoreName::Kind::kPrivatePostgres, "postgres", "a private PostgreSQL server", false, true,
     true},
    {StoreName::Kind::kPostgresUrl, "", "", false, true, false},
};

const StoreRow& Row(StoreName::Kind kind) {
  for (const StoreRow& row : kStores) {
    if (row.kind == kind) return row;
  }
  return kStores[0];  // unreachable: every kind has its row
}

}  // namespace

Result<StoreName> StoreName::Parse(std::string_view text) {
  for (const StoreRow& row : kStores) {
    if (!row.word.empty() && text == row.word) return StoreName{row.kind, ""};
  }
  const std::string url(text);
  // A PostgreSQL URL's parameters are libpq's to read: the store's client checks them when it
  // opens the database (live/server_stores.h).
  if (url.starts_with("postgresql://") || url.starts_with("postgres://")) {
    return StoreName{Kind::kPostgresUrl, url};
  }
  const Status redis =
      IsRedisClusterUrl(url) ? ParseRedisClusterUrl(url).status() : ParseRedisUrl(url).status();
  if (!redis.ok()) {
    return absl::InvalidArgumentError("unknown kv store '" + url +
                                      "' (expected memory, redis, postgres, a Redis or Redis "
                                      "Cluster URL, or a postgresql:// URL: " +
                                      std::string(redis.message()) + ")");
  }
  return StoreName{Kind::kUrl, url};
}

std::string StoreName::ToString() const {
  const StoreRow& row = Row(kind);
  return row.word.empty() ? url : std::string(row.word);
}

std::string StoreName::Describe() const {
  const StoreRow& row = Row(kind);
  return row.words.empty() ? url : std::string(row.words);
}

bool StoreName::redis() const { return Row(kind).redis; }
bool StoreName::postgres() const { return Row(kind).postgres; }
bool StoreName::owns_server() const { return Row(kind).owned; }

bool StoreName::CanRestart(bool kv, bool sql) const {
  return owns_server() || !((kv && redis()) || (sql && postgres()));
}

}  // namespace ratelab
