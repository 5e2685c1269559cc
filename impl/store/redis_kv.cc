#include "impl/store/redis_kv.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <new>

#include "absl/container/inlined_vector.h"

namespace ratelab {

namespace {

timeval ToTimeval(Duration d) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  return {static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// hiredis's reader making KvReply itself, rather than its own objects (an allocation for every
// element of an array, each converted to a KvReply and freed): the reply, or the next element of
// the array being read, in its place there. hiredis reads an array's elements in order, each
// whole before the next, and keeps a pointer only to the arrays it is inside, so an element
// appended may move its finished siblings but never those. nullptr (hiredis reads it as out of
// memory) rather than an exception through hiredis's C.
KvReply* Place(const redisReadTask* task, KvReply::Type type) noexcept {
  try {
    if (task->parent == nullptr) return new KvReply{type, 0, {}, {}};
    auto* parent = static_cast<KvReply*>(task->parent->obj);
    if (task->idx < 0 || static_cast<size_t>(task->idx) != parent->elements.size()) {
      return nullptr;  // never: the elements come in order
    }
    KvReply& element = parent->elements.emplace_back();
    element.type = type;
    return &element;
  } catch (const std::exception&) {  // bad_alloc, or length_error past what a vector holds
    return nullptr;
  }
}

void* CreateString(const redisReadTask* task, char* text, size_t length) {
  KvReply* r = Place(task, task->type == REDIS_REPLY_STATUS  ? KvReply::Type::kStatus
                           : task->type == REDIS_REPLY_ERROR ? KvReply::Type::kError
                                                             : KvReply::Type::kBulk);
  if (r == nullptr) return nullptr;
  try {
    r->text.assign(text, length);
  } catch (const std::bad_alloc&) {
    if (task->parent == nullptr) delete r;
    return nullptr;
  }
  return r;
}

void* CreateArray(const redisReadTask* task, int elements) {
  KvReply* r = Place(task, KvReply::Type::kArray);
  if (r == nullptr) return nullptr;
  try {
    // Room for the elements said, up to a bound: past it the array grows as they come, so that
    // a reply announcing more than it sends holds no more than it sent.
    r->elements.reserve(static_cast<size_t>(std::clamp(elements, 0, 1024)));
  } catch (const std::bad_alloc&) {
    if (task->parent == nullptr) delete r;
    return nullptr;
  }
  return r;
}

void* CreateInteger(const redisReadTask* task, long long value) {  // NOLINT: hiredis's type
  KvReply* r = Place(task, KvReply::Type::kInteger);
  if (r != nullptr) r->integer = value;
  return r;
}

void* CreateNil(const redisReadTask* task) { return Place(task, KvReply::Type::kNil); }

// Called on the whole reply only (an element is its array's).
void FreeReply(void* reply) { delete static_cast<KvReply*>(reply); }

// A table, never changed (hiredis takes it by a pointer to non-const).
redisReplyObjectFunctions kKvReplyFunctions = {CreateString, CreateArray, CreateInteger, CreateNil,
                                               FreeReply};

}  // namespace

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
  c->reader->fn = &kKvReplyFunctions;  // before any reply: each is read as a KvReply
  context_ = c;
  ++connections_;
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

Status RedisKv::Abandon() {
  Disconnect();
  return absl::DeadlineExceededError("Redis at " + endpoint_.Url() +
                                     ": reading a reply: no answer in time");
}

int RedisKv::fd() const { return context_ == nullptr ? -1 : context_->fd; }

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
  std::unique_ptr<KvReply> read(static_cast<KvReply*>(reply));
  return std::move(*read);
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

void AppendRedisCommand(std::string& out, std::span<const std::string> argv) {
  // "*<words>\r\n", then "$<length>\r\n<bytes>\r\n" for each word.
  const auto append_header = [&out](char kind, size_t n) {
    char digits[24];
    digits[0] = kind;
    char* end = std::to_chars(digits + 1, digits + sizeof(digits) - 2, n).ptr;
    *end++ = '\r';
    *end++ = '\n';
    out.append(digits, static_cast<size_t>(end - digits));
  };
  append_header('*', argv.size());
  for (const std::string& word : argv) {
    append_header('$', word.size());
    out.append(word);
    out.append("\r\n", 2);
  }
}

Status RedisKv::Queue(std::span<const std::string> argv) {
  if (Status s = Connect(); !s.ok()) return s;
  command_.clear();
  AppendRedisCommand(command_, argv);
  if (redisAppendFormattedCommand(context_, command_.data(), command_.size()) != REDIS_OK) {
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
