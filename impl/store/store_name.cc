#include "impl/store/store_name.h"

#include <vector>

#include "impl/store/redis_url.h"

namespace ratelab {

namespace {

// The stores named by a word rather than a URL: the word, and what it is in a sentence.
struct NamedStore {
  StoreName::Kind kind;
  std::string_view word;
  std::string_view words;
};
constexpr NamedStore kNamedStores[] = {
    {StoreName::Kind::kMemory, "memory", "the in-memory store"},
    {StoreName::Kind::kPrivateRedis, "redis", "a private redis-server"},
    {StoreName::Kind::kPrivatePostgres, "postgres", "a private PostgreSQL server"},
};

const NamedStore* Named(StoreName::Kind kind) {
  for (const NamedStore& n : kNamedStores) {
    if (n.kind == kind) return &n;
  }
  return nullptr;
}

}  // namespace

Result<StoreName> StoreName::Parse(std::string_view text) {
  for (const NamedStore& n : kNamedStores) {
    if (text == n.word) return StoreName{n.kind, ""};
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
  const NamedStore* n = Named(kind);
  return n != nullptr ? std::string(n->word) : url;
}

std::string StoreName::Describe() const {
  const NamedStore* n = Named(kind);
  return n != nullptr ? std::string(n->words) : url;
}

}  // namespace ratelab
