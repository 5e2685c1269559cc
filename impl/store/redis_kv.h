// RedisKv: the Kv interface on a real Redis, over hiredis. One connection, one command at a time
// (Execute), or many sent before any reply is read (ExecutePipeline).
//
// Where: a URL, `redis://host[:port][/db]` (TCP, port 6379 by default) or
// `unix:///path/to/redis.sock[?db=N]`. The connection is opened lazily and again after any
// I/O error: a command on a connection the server dropped fails, and the one after reconnects.
// Nothing is retried, since a command that got no answer may have run.
//
// Errors: an error reply (WRONGTYPE, NOSCRIPT, a script error) is an OK reply of type kError,
// as with MemoryKv. A server that cannot be reached, or drops the connection, is Unavailable; a
// command that gets no answer within the timeout is DeadlineExceeded (and may have run).
//
// Scripts are the protocols' business: they send EVALSHA and fall back to EVAL on NOSCRIPT, so a
// restarted server (whose script cache is empty) is loaded again by the first request after it.
//
// Not thread-safe: give each thread its own RedisKv. Connecting sets SIGPIPE to be ignored (a
// dropped connection is then an error, not the end of the process).
#ifndef RATELAB_IMPL_STORE_REDIS_KV_H_
#define RATELAB_IMPL_STORE_REDIS_KV_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/store/kv.h"
#include "impl/store/redis_url.h"
#include "model/time.h"

struct redisContext;

namespace ratelab {

struct RedisOptions {
  Duration connect_timeout = std::chrono::seconds(2);
  Duration command_timeout = std::chrono::seconds(5);
};

class RedisKv final : public Kv {
 public:
  explicit RedisKv(RedisEndpoint endpoint, RedisOptions options = {});
  ~RedisKv() override;
  RedisKv(const RedisKv&) = delete;
  RedisKv& operator=(const RedisKv&) = delete;

  // Connects now (Execute would on first use): Unavailable, naming the endpoint, if it can't.
  Status Connect();
  // Closes the connection; the next command opens a new one. After a server restart the old
  // connection is dead, and the first command on it would fail (Unavailable) before the one
  // after it reconnects: a caller that knows of the restart disconnects instead.
  void Disconnect();
  Result<KvReply> Execute(std::span<const std::string> argv) override;
  // Sends every command, then reads every reply, in order: one round trip for all of them.
  Result<std::vector<KvReply>> ExecutePipeline(std::span<const std::vector<std::string>> commands);
  // ExecutePipeline in two halves, so that one thread can keep several connections busy: Send
  // writes the commands out without waiting; Receive reads the next `n` replies.
  Status Send(std::span<const std::vector<std::string>> commands);
  // The same for commands whose words live elsewhere (nothing is copied).
  Status Send(std::span<const std::span<const std::string>> commands);
  // Send in two halves: Queue keeps a command to be sent (its words are copied at once); Flush
  // writes out everything queued.
  Status Queue(std::span<const std::string> argv);
  Status Flush();
  Result<std::vector<KvReply>> Receive(size_t n);
  // Drops the connection, whose replies to what was sent did not come in time (they would come
  // later, out of turn), and says so: DeadlineExceeded, as a read that timed out.
  Status Abandon();

  // The connection's socket, for a caller that waits for its replies itself (-1 when none is
  // open), and its number: one more at each connection opened, so that a new connection on the
  // same descriptor number is told from the last.
  int fd() const;
  int64_t connection() const { return connections_; }

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  // Drops the connection after an error and says what happened, as a Status.
  Status Fail(std::string_view doing);
  // Reads the next reply of what was sent.
  Result<KvReply> ReadReply();

  RedisEndpoint endpoint_;
  RedisOptions options_;
  redisContext* context_ = nullptr;
  std::string command_;  // the command Queue formats, its room kept from call to call
  int64_t connections_ = 0;
};

// Appends `argv` to `out` as a command in Redis's protocol (RESP: an array of bulk strings),
// byte for byte what hiredis's redisFormatCommandArgv writes, without its formatting of each
// length through a printf-like function.
void AppendRedisCommand(std::string& out, std::span<const std::string> argv);

// OK when the database `kv` is connected to (at `url`, for the message) holds no keys;
// FailedPrecondition saying how many it holds otherwise. ratelab empties the database it runs on
// before and after a run, so it only ever takes an empty one.
Status RequireEmptyDatabase(Kv& kv, std::string_view url);

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_REDIS_KV_H_
