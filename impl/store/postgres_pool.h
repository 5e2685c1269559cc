// PostgresPool: several connections to one PostgreSQL server, driven by one thread, so that the
// thread keeps several decisions in flight (as pgbench's clients share its threads): each step
// submitted runs its statement on an idle connection of its own, sent without waiting for the
// answer, and every call is carried on, a step at a time, as its connection's socket is ready:
// connecting, setting the statement timeout, preparing, running. Nothing waits but Wait (or
// Run, which waits and advances until nothing is in flight): a thread that waits elsewhere (an
// HTTP server's event loop) watches fd(), readable when a connection has something to read or
// room to write, until deadline(), and calls Advance.
//
// The requests' protocols must use it as their Sql, and their Contexts as their Executor, which
// keeps each step submitted until it is sent. The pool learns a step's statement by applying the
// step while Execute sends instead of answering (a SQL step does nothing with the store but call
// Execute, sql_protocols.cc); once the answer is in, it applies the step again, answered this
// time, and resumes its request, which may submit its next step. So a step runs one statement;
// one that asks for a second is answered Internal. When more steps wait than there are
// connections, they take the connections in the order they were submitted.
//
// Outside Run and Advance (nothing in flight), Execute runs its statement at once on an idle
// connection, waiting for it. Statements are prepared once per connection, by name, and run in
// autocommit; failures read as PostgresSql's do (PostgresStatementFailed): a lost connection is
// Unavailable (and is opened again for the next statement), the statement timeout
// DeadlineExceeded. Every call ends by its deadline, connecting and preparing included: the
// statement timeout from when its step was submitted, so that one that waited for a connection
// does not wait a timeout more. A server that accepts and then sends nothing (a stalled one)
// makes the step DeadlineExceeded then, and its connection is dropped. (The statement may still
// run once the server resumes: it was sent.) Not thread-safe: one per thread.
#ifndef RATELAB_IMPL_STORE_POSTGRES_POOL_H_
#define RATELAB_IMPL_STORE_POSTGRES_POOL_H_

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/step.h"
#include "impl/store/postgres_sql.h"
#include "impl/store/sql.h"
#include "model/time.h"

namespace ratelab {

class PostgresPool final : public Sql, public DeferredExecutor {
 public:
  // `conninfo`: a libpq connection string or a postgresql:// URL; `connections` at least 1.
  // Connections are opened when first needed.
  PostgresPool(std::string conninfo, int connections, PostgresOptions options = {});
  ~PostgresPool() override;
  PostgresPool(const PostgresPool&) = delete;
  PostgresPool& operator=(const PostgresPool&) = delete;

  // Opens every connection now, each within `timeout` (a server's start, where a slow connect
  // is no decision's): the first decisions then pay no connect. The first failure.
  Status Open(Duration timeout);

  // Sends the steps waiting, waits for their answers, and answers each (resuming its request),
  // until nothing waits or is in flight.
  void Run() override;
  // Does what can be done now, waiting for nothing: reads what has come, answers every step
  // whose answer is complete or whose deadline has passed, and sends (or starts connecting for)
  // the steps waiting on the idle connections.
  void Advance();
  // Waits until a connection is ready (fd() readable) or the first deadline, whichever is first.
  void Wait();
  // One turn, for a driver that keeps the pool busy: Advance, Wait, Advance. False when nothing
  // waited or was in flight.
  bool Turn();
  // A descriptor readable when a connection with a call in flight is ready to go on (an epoll
  // set of theirs), for a thread that waits on its own event loop; -1 when none could be made.
  int fd() const { return epoll_; }
  // When the first step in flight or waiting is due; none when none is.
  std::optional<std::chrono::steady_clock::time_point> deadline() const;
  bool busy() const { return in_flight_ > 0 || !waiting_.empty(); }
  // Steps sent and not yet answered; steps waiting for a connection.
  size_t in_flight() const { return in_flight_; }
  size_t waiting() const { return waiting_.size(); }
  int connections() const { return static_cast<int>(connections_.size()); }

  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override;
  // Takes `step` to run, due within the statement timeout from now: one that waits for a
  // connection past it is answered DeadlineExceeded without being sent, so that however many
  // decisions arrive at once, each ends within its timeout.
  void Submit(PendingStep& step) override {
    waiting_.push_back({&step, std::chrono::steady_clock::now() + options_.statement_timeout});
  }

  struct Connection;  // one connection, and the step in flight on it (postgres_pool.cc)

 private:
  enum class Mode { kDirect, kSend, kReplay };

  // Sends the steps waiting while a connection is idle.
  void SendWaiting();
  // Applies `step` with `answer` and resumes its request.
  void Answer(PendingStep& step, Result<SqlReply> answer);
  // Answers the step in flight on `c` with `answer`, closing `c` first when it failed so.
  void Finish(Connection& c, Result<SqlReply> answer);
  // Waits for `c`'s call (not a step's) to end: Execute and Open outside a run.
  Result<SqlReply> Complete(Connection& c);
  // Closes `c`'s connection (the next call opens another).
  void Drop(Connection& c);
  // Has the epoll set watch `c` for what its call waits for (`watch`), or not at all.
  void Watch(Connection& c, bool watch);

  std::string conninfo_;
  PostgresOptions options_;
  int epoll_;  // the connections whose calls are in flight, watched for what each waits for
  std::vector<std::unique_ptr<Connection>> connections_;
  struct Waiting {
    PendingStep* step;
    std::chrono::steady_clock::time_point deadline;  // its answer's, from when it was submitted
  };
  std::deque<Waiting> waiting_;
  size_t in_flight_ = 0;
  Mode mode_ = Mode::kDirect;
  Connection* sending_on_ = nullptr;             // kSend: the step's connection
  int statements_ = 0;                           // kSend, kReplay: statements the step asked for
  bool sent_ = false;                            // kSend: its statement is in flight
  std::optional<Result<SqlReply>> sent_failed_;  // kSend: why the statement was not sent
  Result<SqlReply> replay_ = SqlReply();         // kReplay: the step's answer
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_POSTGRES_POOL_H_
