#include "impl/store/redis_url.h"

#include <charconv>
#include <optional>

namespace ratelab {

namespace {

constexpr std::string_view kRedisScheme = "redis://";
constexpr std::string_view kUnixScheme = "unix://";
constexpr std::string_view kUrlForms = "redis://host[:port][/db] or unix:///path.sock[?db=N]";

// A whole non-negative decimal number in [0, max], or nullopt.
std::optional<int> ParseNumber(std::string_view s, int max) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0 || v > max) {
    return std::nullopt;
  }
  return v;
}

Status BadUrl(std::string_view url, std::string_view why) {
  return absl::InvalidArgumentError("bad Redis URL '" + std::string(url) +
                                    "': " + std::string(why) + " (expected " +
                                    std::string(kUrlForms) + ")");
}

constexpr std::string_view kClusterScheme = "redis-cluster://";

}  // namespace

std::string RedisEndpoint::Url() const {
  if (!unix_path.empty()) return std::string(kUnixScheme) + unix_path + "?db=" + std::to_string(db);
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(kRedisScheme) + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) +
         "/" + std::to_string(db);
}

Result<RedisEndpoint> ParseRedisUrl(std::string_view url) {
  constexpr int kMaxDb = 1 << 20;
  RedisEndpoint e;
  if (url.starts_with(kUnixScheme)) {
    std::string_view rest = url.substr(kUnixScheme.size());
    if (const size_t q = rest.find('?'); q != std::string_view::npos) {
      const std::string_view query = rest.substr(q + 1);
      rest = rest.substr(0, q);
      if (!query.starts_with("db=")) return BadUrl(url, "the only query it takes is db=N");
      const std::optional<int> db = ParseNumber(query.substr(3), kMaxDb);
      if (!db) return BadUrl(url, "db must be a whole number");
      e.db = *db;
    }
    if (!rest.starts_with('/')) return BadUrl(url, "a unix socket path must be absolute");
    e.unix_path = std::string(rest);
    return e;
  }
  if (!url.starts_with(kRedisScheme)) return BadUrl(url, "unknown scheme");
  std::string_view rest = url.substr(kRedisScheme.size());
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db_text = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db_text.empty()) {
      const std::optional<int> db = ParseNumber(db_text, kMaxDb);
      if (!db) return BadUrl(url, "the database after '/' must be a whole number");
      e.db = *db;
    }
  }
  if (rest.find('@') != std::string_view::npos) {
    return BadUrl(url, "passwords in the URL are not supported");
  }
  std::string_view port_text;
  if (rest.starts_with('[')) {  // [::1]:6379
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "unclosed '[' in the host");
    e.host = std::string(rest.substr(1, close - 1));
    rest = rest.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return BadUrl(url, "expected ':' after ']'");
    port_text = rest.empty() ? "" : rest.substr(1);
    if (rest == ":") return BadUrl(url, "empty port");
  } else if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    e.host = std::string(rest.substr(0, colon));
    port_text = rest.substr(colon + 1);
    if (port_text.empty()) return BadUrl(url, "empty port");
  } else {
    e.host = std::string(rest);
  }
  if (e.host.empty()) e.host = "127.0.0.1";
  if (!port_text.empty()) {
    const std::optional<int> port = ParseNumber(port_text, 65535);
    if (!port || *port == 0) return BadUrl(url, "the port must be a number from 1 to 65535");
    e.port = *port;
  }
  return e;
}

bool IsRedisClusterUrl(std::string_view url) { return url.starts_with(kClusterScheme); }

Result<std::vector<RedisEndpoint>> ParseRedisClusterUrl(std::string_view url) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError("bad Redis Cluster URL '" + std::string(url) + "': " + why +
                                      " (expected redis-cluster://host:port[,host:port...])");
  };
  if (!IsRedisClusterUrl(url)) return bad("unknown scheme");
  std::vector<RedisEndpoint> nodes;
  std::string_view rest = url.substr(kClusterScheme.size());
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view node = rest.substr(0, comma);
    if (node.empty()) return bad("a node is empty");
    if (node.find('/') != std::string_view::npos) {
      return bad("a cluster has only database 0: no '/db' after a node");
    }
    Result<RedisEndpoint> e = ParseRedisUrl("redis://" + std::string(node));
    if (!e.ok())
      return bad("node '" + std::string(node) + "': " + std::string(e.status().message()));
    nodes.push_back(*e);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return nodes;
}

}  // namespace ratelab
