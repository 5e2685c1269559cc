// `ratelab serve` as a library: the rate-limit service (service.h) put together from where its
// rules and counters are, and carried over HTTP (http_server.h) by one or more threads.
//
// Rules are fixed (a rules file the caller has read, or the default rules) or followed in
// PostgreSQL (LISTEN/NOTIFY; the admin API writes them there). Counters are in process, shared by
// every thread, or in a store every thread reaches through a connection of its own: Redis (the Lua
// script of each rule's algorithm) or PostgreSQL (the upsert or the bucket row), where they
// outlive the server. The threads share one failure policy (one circuit breaker) and one set of
// metrics.
#ifndef RATELAB_IMPL_SERVICE_SERVE_H_
#define RATELAB_IMPL_SERVICE_SERVE_H_

#include <memory>
#include <optional>
#include <string>

#include "impl/core/clock.h"
#include "impl/limiters/failure_policy.h"
#include "impl/rules/rules.h"
#include "impl/service/http_server.h"
#include "impl/service/service.h"
#include "impl/store/store_name.h"

namespace ratelab {

struct ServeConfig {
  // How it listens; http.max_connections 0: DefaultMaxConnections, below the descriptor limit by
  // what the store connections need.
  HttpServerOptions http;
  // How requests are read: the longest identity, how paths are normalized.
  ServiceOptions service;
  // In process: the most keys each rule keeps (0: no bound); past it the least recently used
  // are dropped (InProcessLimiter). Idle keys are dropped every second whatever the bound.
  size_t max_keys = 1'000'000;
  // Where the operator is told what callers are not (a store's failures in full, accept errors).
  OperatorLog log;
  // The fixed rules, and the file they were read from (empty: the default rules); used when
  // there is no `rules_store`.
  RuleSet rules;
  std::string rules_file;
  // A PostgreSQL store (postgres, a private server whose table is empty at the start, shared
  // with the counters when they are on one too; or a postgresql:// URL): the rules table there,
  // followed as it changes.
  std::optional<StoreName> rules_store;
  // The token the admin API's callers must send; empty: the admin API is off. It writes to the
  // rules table, or refuses writes (405) for fixed rules.
  std::string admin_token;
  // Where the counters are: memory, redis, a Redis or Redis Cluster URL, postgres or a
  // postgresql:// URL.
  StoreName store;
  FailurePolicy on_store_failure;
  // The longest a call to the store may take before it counts as failed.
  Duration store_timeout = std::chrono::milliseconds(250);
  int threads = 1;
  // On PostgreSQL, each thread's connections: a thread's decisions run on as many connections at
  // once (PostgresPool). (On Redis a thread pipelines on one connection.)
  int store_connections = 4;
  // Protocols that enforce the rules of their algorithm instead of the usual ones (on Redis or
  // PostgreSQL; --protocol).
  ProtocolChoices protocols;
};

class RateLimitServer {
 public:
  // Starts what `config` names (private servers, connections, the rules follower) and listens;
  // the first error says what could not be had. Decisions take the time from `clock`, which
  // must outlive the server and be safe to read from several threads.
  static Result<std::unique_ptr<RateLimitServer>> Start(ServeConfig config, const Clock& clock);
  ~RateLimitServer();
  RateLimitServer(const RateLimitServer&) = delete;
  RateLimitServer& operator=(const RateLimitServer&) = delete;

  // One line: where it listens, where it decides, by which rules, its failure policy, and
  // whether the admin API is on.
  std::string Banner() const;
  // What an operator should know before the first request: the store did not answer at start
  // (serve runs anyway; /readyz says not ready until it does). Empty when nothing.
  std::string Warning() const;
  uint16_t port() const;
  // Serves until Stop.
  void Run();
  // Stops gracefully, from any thread: requests already read are answered.
  void Stop();
  int64_t answered() const;

  struct Parts;  // defined where it is implemented

 private:
  explicit RateLimitServer(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_SERVE_H_
