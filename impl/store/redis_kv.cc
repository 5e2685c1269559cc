#include "impl/store/redis_kv.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "absl/container/inlined_vector.h"

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

timeval ToTimeval(Duration d) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return {static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

KvReply Convert(const redisReply& r) {
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      return KvReply::Integer(r.integer);
    case REDIS_REPLY_STATUS:
      return KvReply::Status(std::string(r.str, r.len));
    case REDIS_REPLY_ERROR:
      return KvReply::Error(std::string(r.str, r.len));
    case REDIS_REPLY_STRING:
      return KvReply::Bulk(std::string(r.str, r.len));
    case REDIS_REPLY_ARRAY: {
      std::vector<KvReply> elements;
      elements.reserve(r.elements);
      for (size_t i = 0; i < r.elements; ++i) elements.push_back(Convert(*r.element[i]));
      return KvReply::Array(std::move(elements));
    }
    default:
      return KvReply::Nil();
  }
}

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

RedisKv::RedisKv(RedisEndpoint endpoint, RedisOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {}

RedisKv::~RedisKv() { Disconnect(); }

Status RedisKv::Connect() {
  if (context_ != nullptr) return absl::OkStatus();
  // hiredis writes with plain write(2): a server that went away would kill the process with
  // SIGPIPE instead of failing the command with EPIPE.
  signal(SIGPIPE, SIG_IGN);
  const timeval connect_timeout = ToTimeval(options_.connect_timeout);
  redisContext* c =
      endpoint_.unix_path.empty()
          ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, connect_timeout)
          : redisConnectUnixWithTimeout(endpoint_.unix_path.c_str(), connect_timeout);
  if (c == nullptr) return absl::ResourceExhaustedError("hiredis could not allocate a context");
  if (c->err != 0) {
    const std::string why = c->errstr;
    redisFree(c);
    return absl::UnavailableError("cannot connect to Redis at " + endpoint_.Url() + ": " + why);
  }
  if (redisSetTimeout(c, ToTimeval(options_.command_timeout)) != REDIS_OK) {
    redisFree(c);
    return absl::UnavailableError("cannot set the command timeout on " + endpoint_.Url());
  }
  context_ = c;
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    const std::vector<std::string> select = {"SELECT", db};
    Result<KvReply> r = Execute(select);
    if (!r.ok()) return r.status();
    if (r->is_error()) {
      redisFree(context_);
      context_ = nullptr;
      return absl::InvalidArgumentError("Redis at " + endpoint_.Url() + " refused database " + db +
                                        ": " + r->text);
    }
  }
  return absl::OkStatus();
}

void RedisKv::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

Status RedisKv::Fail(std::string_view doing) {
  const int saved_errno = errno;
  const bool timed_out =
      context_->err == REDIS_ERR_IO && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK ||
                                        std::string_view(context_->errstr) == strerror(EAGAIN));
  const std::string what = "Redis at " + endpoint_.Url() + ": " + std::string(doing) + ": " +
                           (context_->errstr[0] != '\0' ? context_->errstr : "connection lost");
  redisFree(context_);
  context_ = nullptr;
  return timed_out ? absl::DeadlineExceededError(what + " (no answer in time)")
                   : absl::UnavailableError(what);
}

Result<KvReply> RedisKv::Execute(std::span<const std::string> argv) {
  const std::span<const std::string> one[] = {argv};
  if (Status s = Send(one); !s.ok()) return s;
  return ReadReply();
}

Result<KvReply> RedisKv::ReadReply() {
  void* reply = nullptr;
  if (redisGetReply(context_, &reply) != REDIS_OK || reply == nullptr) {
    return Fail("reading a reply");
  }
  KvReply out = Convert(*static_cast<redisReply*>(reply));
  freeReplyObject(reply);
  return out;
}

Status RedisKv::Send(std::span<const std::vector<std::string>> commands) {
  absl::InlinedVector<std::span<const std::string>, 16> spans(commands.begin(), commands.end());
  return Send(std::span<const std::span<const std::string>>(spans.data(), spans.size()));
}

Status RedisKv::Send(std::span<const std::span<const std::string>> commands) {
  for (const std::span<const std::string> argv : commands) {
    if (Status s = Queue(argv); !s.ok()) return s;
  }
  return Flush();
}

Status RedisKv::Queue(std::span<const std::string> argv) {
  if (Status s = Connect(); !s.ok()) return s;
  absl::InlinedVector<const char*, 16> args;
  absl::InlinedVector<size_t, 16> lengths;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), args.data(),
                             lengths.data()) != REDIS_OK) {
    return Fail("queueing a command");
  }
  return absl::OkStatus();
}

Status RedisKv::Flush() {
  if (Status s = Connect(); !s.ok()) return s;
  for (int done = 0; done == 0;) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) return Fail("sending");
  }
  return absl::OkStatus();
}

Result<std::vector<KvReply>> RedisKv::Receive(size_t n) {
  if (context_ == nullptr) return absl::FailedPreconditionError("nothing was sent");
  std::vector<KvReply> replies;
  replies.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Result<KvReply> r = ReadReply();
    if (!r.ok()) return r.status();
    replies.push_back(*std::move(r));
  }
  return replies;
}

Result<std::vector<KvReply>> RedisKv::ExecutePipeline(
    std::span<const std::vector<std::string>> commands) {
  if (Status s = Send(commands); !s.ok()) return s;
  return Receive(commands.size());
}

Status RequireEmptyDatabase(Kv& kv, std::string_view url) {
  const std::vector<std::string> dbsize = {"DBSIZE"};
  Result<KvReply> n = kv.Execute(dbsize);
  if (!n.ok()) return n.status();
  if (n->is_error())
    return absl::UnavailableError("DBSIZE at " + std::string(url) + ": " + n->text);
  if (n->integer == 0) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the database at " + std::string(url) + " holds " + std::to_string(n->integer) +
      " keys: ratelab empties the database it runs on before and after each run, so give it "
      "an empty one (another database number, e.g. redis://host:6379/15)");
}

}  // namespace ratelab
