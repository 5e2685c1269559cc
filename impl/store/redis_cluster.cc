#include "impl/store/redis_cluster.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace ratelab {

namespace {

constexpr int kMaxRedirects = 5;

// Server commands: no keys, so any node may run them.
constexpr std::string_view kKeyless[] = {
    "TIME",   "PING",     "DBSIZE",  "FLUSHALL", "FLUSHDB", "KEYS",     "SCAN",
    "SCRIPT", "INFO",     "ECHO",    "SELECT",   "ASKING",  "READONLY", "CONFIG",
    "MULTI",  "EXEC",     "DISCARD", "CLUSTER",  "CLIENT",  "COMMAND",  "RANDOMKEY",
    "WAIT",   "LASTSAVE", "SAVE",    "BGSAVE",   "DEBUG",   "FUNCTION", "SHUTDOWN"};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Commands that concern the whole store: run on every master, replies combined.
bool OnEveryMasterCommand(const std::string& name) {
  return name == "FLUSHALL" || name == "FLUSHDB" || name == "SCRIPT" || name == "DBSIZE" ||
         name == "KEYS";
}

std::string NodeName(const std::string& host, int port) {
  return host + ":" + std::to_string(port);
}

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381": the slot and where to go.
struct Redirect {
  bool moved = false;
  int slot = 0;
  std::string host;  // empty: the node that answered
  int port = 0;
};
std::optional<Redirect> ParseRedirect(const std::string& error) {
  Redirect r;
  std::string_view rest = error;
  if (rest.starts_with("MOVED ")) {
    r.moved = true;
    rest.remove_prefix(6);
  } else if (rest.starts_with("ASK ")) {
    rest.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const size_t space = rest.find(' ');
  const size_t colon = rest.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
    return std::nullopt;
  }
  const std::string_view slot = rest.substr(0, space), port = rest.substr(colon + 1);
  if (std::from_chars(slot.data(), slot.data() + slot.size(), r.slot).ec != std::errc() ||
      std::from_chars(port.data(), port.data() + port.size(), r.port).ec != std::errc() ||
      r.slot < 0 || r.slot >= kClusterSlots) {
    return std::nullopt;
  }
  r.host = std::string(rest.substr(space + 1, colon - space - 1));
  return r;
}

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  for (const char c : data) {
    crc ^= static_cast<uint16_t>(static_cast<uint8_t>(c) << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

int KeySlot(std::string_view key) {
  if (const size_t open = key.find('{'); open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & (kClusterSlots - 1);
}

std::vector<std::string_view> KeysOf(std::span<const std::string> argv) {
  std::vector<std::string_view> keys;
  if (argv.empty()) return keys;
  const std::string name = Upper(argv[0]);
  if (std::find(std::begin(kKeyless), std::end(kKeyless), name) != std::end(kKeyless)) {
    return keys;
  }
  if (name == "EVAL" || name == "EVALSHA" || name == "EVAL_RO" || name == "EVALSHA_RO" ||
      name == "FCALL" || name == "FCALL_RO") {
    size_t n = 0;
    if (argv.size() > 2) {
      const std::string& count = argv[2];
      (void)std::from_chars(count.data(), count.data() + count.size(), n);
    }
    for (size_t i = 3; i < argv.size() && i < 3 + n; ++i) keys.push_back(argv[i]);
    return keys;
  }
  if (name == "DEL" || name == "EXISTS" || name == "MGET" || name == "UNLINK" || name == "TOUCH" ||
      name == "WATCH") {
    for (size_t i = 1; i < argv.size(); ++i) keys.push_back(argv[i]);
    return keys;
  }
  if (name == "MSET" || name == "MSETNX") {
    for (size_t i = 1; i < argv.size(); i += 2) keys.push_back(argv[i]);
    return keys;
  }
  if (name == "OBJECT" || name == "MEMORY") {
    if (argv.size() > 2) keys.push_back(argv[2]);
    return keys;
  }
  if (argv.size() > 1) keys.push_back(argv[1]);
  return keys;
}

Result<std::unique_ptr<Kv>> OpenRedisUrl(std::string_view url, RedisOptions options) {
  if (IsRedisClusterUrl(url)) {
    Result<std::vector<RedisEndpoint>> nodes = ParseRedisClusterUrl(url);
    if (!nodes.ok()) return nodes.status();
    return std::unique_ptr<Kv>(std::make_unique<RedisClusterKv>(*std::move(nodes), options));
  }
  Result<RedisEndpoint> endpoint = ParseRedisUrl(url);
  if (!endpoint.ok()) return endpoint.status();
  return std::unique_ptr<Kv>(std::make_unique<RedisKv>(*std::move(endpoint), options));
}

RedisClusterKv::RedisClusterKv(std::vector<RedisEndpoint> seeds, RedisOptions options)
    : seeds_(std::move(seeds)), options_(options), slots_(kClusterSlots, nullptr) {}

RedisClusterKv::~RedisClusterKv() = default;

RedisClusterKv::Node& RedisClusterKv::NodeAt(const std::string& host, int port) {
  auto [it, inserted] = nodes_.try_emplace(NodeName(host, port));
  if (inserted) {
    it->second.endpoint.host = host;
    it->second.endpoint.port = port;
    it->second.kv = std::make_unique<RedisKv>(it->second.endpoint, options_);
  }
  return it->second;
}

Status RedisClusterKv::Refresh() {
  ++counters_.refreshes;
  std::vector<RedisEndpoint> candidates;
  for (const auto& [name, node] : nodes_) candidates.push_back(node.endpoint);
  candidates.insert(candidates.end(), seeds_.begin(), seeds_.end());
  const std::vector<std::string> slots_command = {"CLUSTER", "SLOTS"};
  Status last = absl::UnavailableError("no nodes given");
  for (const RedisEndpoint& candidate : candidates) {
    Node& asked = NodeAt(candidate.host, candidate.port);
    Result<KvReply> r = asked.kv->Execute(slots_command);
    if (!r.ok()) {
      last = r.status();
      continue;
    }
    if (r->type != KvReply::Type::kArray) {
      last = absl::FailedPreconditionError(NodeName(candidate.host, candidate.port) +
                                           " answered CLUSTER SLOTS with " + ToString(*r) +
                                           " (is it a cluster node?)");
      continue;
    }
    std::fill(slots_.begin(), slots_.end(), nullptr);
    for (const KvReply& range : r->elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      const KvReply& master = range.elements[2];
      const std::string host =
          master.elements[0].text.empty() ? candidate.host : master.elements[0].text;
      Node* owner = &NodeAt(host, static_cast<int>(master.elements[1].integer));
      const int64_t from = std::clamp<int64_t>(range.elements[0].integer, 0, kClusterSlots - 1);
      const int64_t to = std::clamp<int64_t>(range.elements[1].integer, 0, kClusterSlots - 1);
      for (int64_t s = from; s <= to; ++s) slots_[static_cast<size_t>(s)] = owner;
    }
    stale_ = false;
    return absl::OkStatus();
  }
  return absl::UnavailableError("cannot read the slot map of the Redis Cluster: " +
                                std::string(last.message()));
}

Status RedisClusterKv::EnsureMap() { return stale_ ? Refresh() : absl::OkStatus(); }

std::vector<RedisClusterKv::Node*> RedisClusterKv::MasterNodes() const {
  std::vector<Node*> out;
  std::set<const Node*> seen;
  for (Node* n : slots_) {
    if (n != nullptr && seen.insert(n).second) out.push_back(n);
  }
  return out;
}

std::vector<RedisEndpoint> RedisClusterKv::Masters() {
  std::vector<RedisEndpoint> out;
  if (!EnsureMap().ok()) return out;
  for (const Node* n : MasterNodes()) out.push_back(n->endpoint);
  return out;
}

std::optional<RedisEndpoint> RedisClusterKv::Owner(int slot) {
  if (!EnsureMap().ok() || slot < 0 || slot >= kClusterSlots) return std::nullopt;
  const Node* n = slots_[static_cast<size_t>(slot)];
  if (n == nullptr) return std::nullopt;
  return n->endpoint;
}

Result<KvReply> RedisClusterKv::Execute(std::span<const std::string> argv) {
  if (argv.empty()) return KvReply::Error("ERR empty command");
  if (OnEveryMasterCommand(Upper(argv[0]))) return OnEveryMaster(argv);
  const std::vector<std::string_view> keys = KeysOf(argv);
  int slot = -1;
  for (const std::string_view key : keys) {
    const int s = KeySlot(key);
    if (slot >= 0 && s != slot) {
      return KvReply::Error("CROSSSLOT Keys in request don't hash to the same slot");
    }
    slot = s;
  }
  return OnSlot(slot, argv);
}

Result<KvReply> RedisClusterKv::OnSlot(int slot, std::span<const std::string> argv) {
  if (Status s = EnsureMap(); !s.ok()) return s;
  Node* node = nullptr;
  if (slot >= 0) {
    node = slots_[static_cast<size_t>(slot)];
  } else {
    for (Node* n : slots_) {
      if (n != nullptr) {
        node = n;
        break;
      }
    }
  }
  if (node == nullptr) {
    stale_ = true;
    return absl::UnavailableError("no master of the Redis Cluster serves slot " +
                                  std::to_string(slot));
  }
  bool asking = false;
  for (int redirects = 0;; ++redirects) {
    Result<KvReply> reply = absl::UnknownError("unset");
    if (asking) {
      const std::vector<std::vector<std::string>> both = {
          {"ASKING"}, std::vector<std::string>(argv.begin(), argv.end())};
      Result<std::vector<KvReply>> replies = node->kv->ExecutePipeline(both);
      if (replies.ok()) {
        reply = std::move(replies->back());
      } else {
        reply = replies.status();
      }
    } else {
      reply = node->kv->Execute(argv);
    }
    if (!reply.ok()) {
      stale_ = true;  // the node may have gone, and its slots with it
      return reply;
    }
    if (!reply->is_error()) return reply;
    const std::optional<Redirect> to = ParseRedirect(reply->text);
    if (!to) return reply;
    if (redirects == kMaxRedirects) {
      stale_ = true;
      return absl::UnavailableError("the Redis Cluster redirected " + argv[0] + " more than " +
                                    std::to_string(kMaxRedirects) + " times; last: " + reply->text);
    }
    Node& next = NodeAt(to->host.empty() ? node->endpoint.host : to->host, to->port);
    if (to->moved) {
      ++counters_.moved;
      slots_[static_cast<size_t>(to->slot)] = &next;
      stale_ = true;  // slots move together: read the whole map before the next command
      asking = false;
    } else {
      ++counters_.ask;
      asking = true;
    }
    node = &next;
  }
}

Result<KvReply> RedisClusterKv::OnEveryMaster(std::span<const std::string> argv) {
  if (Status s = EnsureMap(); !s.ok()) return s;
  const std::string name = Upper(argv[0]);
  std::vector<KvReply> replies;
  for (Node* n : MasterNodes()) {
    Result<KvReply> r = n->kv->Execute(argv);
    if (!r.ok()) {
      stale_ = true;
      return r;
    }
    replies.push_back(*std::move(r));
  }
  if (replies.empty()) return absl::UnavailableError("the Redis Cluster has no masters");
  for (const KvReply& r : replies) {
    if (r.is_error()) return r;
  }
  if (name == "DBSIZE") {
    int64_t sum = 0;
    for (const KvReply& r : replies) sum += r.integer;
    return KvReply::Integer(sum);
  }
  if (name == "KEYS") {
    std::vector<KvReply> all;
    for (KvReply& r : replies) {
      for (KvReply& k : r.elements) all.push_back(std::move(k));
    }
    return KvReply::Array(std::move(all));
  }
  return replies.front();
}

}  // namespace ratelab
