#include "impl/store/postgres_pool.h"

#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <set>

namespace ratelab {

namespace {

using Steady = std::chrono::steady_clock;

std::string ConnectionError(PGconn* pg) {
  return PostgresTrimmed(pg != nullptr ? PQerrorMessage(pg) : "out of memory");
}

// Unavailable: `what` went wrong with `pg`, and libpq's own word for why.
Status Unavailable(std::string_view what, PGconn* pg) {
  return absl::UnavailableError(std::string(what) + ": " + ConnectionError(pg));
}

}  // namespace

struct PostgresPool::Connection {
  ~Connection() { Close(); }
  void Close() {
    if (pg != nullptr) PQfinish(pg);
    pg = nullptr;
    prepared.clear();
  }

  PGconn* pg = nullptr;
  std::set<std::string, std::less<>> prepared;
  std::string statement;                 // the name of the statement last sent
  PendingStep* step = nullptr;           // the step in flight, if any
  std::optional<Result<SqlReply>> read;  // its answer, as far as read
  std::optional<Status> refuse;          // the answer it gets instead (it asked for more)
  Steady::time_point deadline;
};

namespace {

using Connection = PostgresPool::Connection;

int PollTimeoutMs(Steady::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
}

// Waits until `fd` is ready for `events` or `deadline` passes; false at the deadline.
bool WaitFor(int fd, short events, Steady::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int ready = poll(&p, 1, PollTimeoutMs(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;  // the deadline
    // Another error than EINTR: libpq's next call says what is wrong with the connection,
    // unless the deadline has passed.
    if (errno != EINTR) return Steady::now() < deadline;
  }
}

Status TookTooLong(const char* what) {
  return absl::DeadlineExceededError(std::string("PostgreSQL did not answer in time ") + what);
}

// Sends what libpq holds for `c` (the connection is non-blocking), by `deadline`.
Status Flush(Connection& c, Steady::time_point deadline) {
  while (true) {
    const int left = PQflush(c.pg);
    if (left == 0) return absl::OkStatus();
    if (left < 0) return Unavailable("PostgreSQL connection lost", c.pg);
    if (!WaitFor(PQsocket(c.pg), POLLOUT | POLLIN, deadline)) return TookTooLong("(sending)");
    if (PQconsumeInput(c.pg) == 0) {
      return Unavailable("PostgreSQL connection lost", c.pg);
    }
  }
}

// The result of the command sent last on `c`, read by `deadline` (every result of it taken; the
// first kept).
Result<PGresult*> Await(Connection& c, Steady::time_point deadline, const char* what) {
  if (Status s = Flush(c, deadline); !s.ok()) return s;
  PGresult* first = nullptr;
  while (true) {
    while (PQisBusy(c.pg) == 0) {
      PGresult* r = PQgetResult(c.pg);
      if (r == nullptr) {
        if (first == nullptr) return absl::InternalError("PostgreSQL answered with no result");
        return first;
      }
      if (first == nullptr) {
        first = r;
      } else {
        PQclear(r);
      }
    }
    if (!WaitFor(PQsocket(c.pg), POLLIN, deadline) || PQconsumeInput(c.pg) == 0) {
      if (first != nullptr) PQclear(first);
      if (Steady::now() >= deadline) return TookTooLong(what);
      return Unavailable("PostgreSQL connection lost", c.pg);
    }
  }
}

// Connects `c` and sets its statement timeout, all by `deadline`: libpq's non-blocking connect,
// so that a server that accepts and then says nothing (a stalled one) costs no more than the
// time a call may take.
Status Open(Connection& c, const std::string& conninfo, const PostgresOptions& options,
            Steady::time_point deadline) {
  const auto failed = [&](Status s) {
    c.Close();
    return s;
  };
  c.pg = PQconnectStart(conninfo.c_str());
  if (c.pg == nullptr || PQstatus(c.pg) == CONNECTION_BAD) {
    return failed(Unavailable("cannot connect to PostgreSQL", c.pg));
  }
  PostgresPollingStatusType polled = PGRES_POLLING_WRITING;
  while (polled != PGRES_POLLING_OK) {
    if (polled == PGRES_POLLING_FAILED) {
      return failed(Unavailable("cannot connect to PostgreSQL", c.pg));
    }
    if (!WaitFor(PQsocket(c.pg), polled == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline)) {
      return failed(TookTooLong("(connecting)"));
    }
    polled = PQconnectPoll(c.pg);
  }
  if (PQsetnonblocking(c.pg, 1) != 0) {
    return failed(Unavailable("cannot set up a PostgreSQL connection", c.pg));
  }
  const std::string set =
      "SET statement_timeout = " + std::to_string(options.statement_timeout.count());
  if (PQsendQuery(c.pg, set.c_str()) == 0) {
    return failed(Unavailable("cannot set up a PostgreSQL connection", c.pg));
  }
  Result<PGresult*> r = Await(c, deadline, "(setting up a connection)");
  if (!r.ok()) return failed(r.status());
  const bool ok = PQresultStatus(*r) == PGRES_COMMAND_OK;
  PQclear(*r);
  if (!ok) {
    return failed(Unavailable("cannot set up a PostgreSQL connection", c.pg));
  }
  return absl::OkStatus();
}

// The answer `r` gives to the statement last sent on `c`.
Result<SqlReply> ReplyOf(const PGresult* r, const Connection& c) {
  const ExecStatusType status = PQresultStatus(r);
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    return PostgresStatementFailed(c.statement, state != nullptr ? state : "",
                                   PQresultErrorMessage(r), PQstatus(c.pg) == CONNECTION_OK);
  }
  SqlReply reply;
  const char* affected = PQcmdTuples(const_cast<PGresult*>(r));
  std::from_chars(affected, affected + std::strlen(affected), reply.affected);
  const int rows = PQntuples(r);
  const int columns = PQnfields(r);
  reply.rows.reserve(static_cast<size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    SqlReply::Row& row = reply.rows.emplace_back();
    row.reserve(static_cast<size_t>(columns));
    for (int j = 0; j < columns; ++j) {
      if (PQgetisnull(r, i, j) != 0) {
        row.emplace_back();
      } else {
        row.emplace_back(
            std::string(PQgetvalue(r, i, j), static_cast<size_t>(PQgetlength(r, i, j))));
      }
    }
  }
  return reply;
}

// Sends `statement` on `c` (connecting and preparing it first where needed), to be answered by
// `deadline`. Nothing when it was sent; else the answer it gets at once (a failure, or the
// statement's own error at preparing).
std::optional<Result<SqlReply>> Send(Connection& c, const SqlStatement& statement,
                                     std::span<const std::string> params,
                                     const std::string& conninfo, const PostgresOptions& options,
                                     Steady::time_point deadline) {
  if (c.pg == nullptr) {
    if (Status s = Open(c, conninfo, options, deadline); !s.ok()) return Result<SqlReply>(s);
  }
  c.statement = std::string(statement.name);
  if (!c.prepared.contains(c.statement)) {
    if (PQsendPrepare(c.pg, c.statement.c_str(), std::string(statement.text).c_str(), 0, nullptr) ==
        0) {
      Result<SqlReply> lost = Unavailable("PostgreSQL connection lost", c.pg);
      c.Close();
      return lost;
    }
    Result<PGresult*> r = Await(c, deadline, "(preparing a statement)");
    if (!r.ok()) {
      c.Close();
      return Result<SqlReply>(r.status());
    }
    Result<SqlReply> prepared = ReplyOf(*r, c);
    PQclear(*r);
    if (!prepared.ok() || prepared->is_error()) {
      if (absl::IsUnavailable(prepared.status())) c.Close();
      return prepared;
    }
    c.prepared.insert(c.statement);
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  if (PQsendQueryPrepared(c.pg, c.statement.c_str(), static_cast<int>(values.size()), values.data(),
                          nullptr, nullptr, 0) == 0) {
    Result<SqlReply> lost = Unavailable("PostgreSQL connection lost", c.pg);
    c.Close();
    return lost;
  }
  if (Status s = Flush(c, deadline); !s.ok()) {
    c.Close();
    return Result<SqlReply>(s);
  }
  c.read.reset();
  c.deadline = deadline;
  return std::nullopt;
}

// Reads what has come on `c` (`readable`: poll said so) or gives up at its deadline: the
// statement's answer once it is complete, else nothing. A lost connection is closed.
std::optional<Result<SqlReply>> Collect(Connection& c, bool readable, Steady::time_point now) {
  bool complete = false;
  if (readable) {
    if (PQconsumeInput(c.pg) == 0) {
      c.read = Unavailable("PostgreSQL connection lost", c.pg);
      complete = true;
    }
    while (!complete && PQisBusy(c.pg) == 0) {
      PGresult* r = PQgetResult(c.pg);
      if (r == nullptr) {
        complete = true;
      } else {
        if (!c.read) c.read = ReplyOf(r, c);  // the first result is the statement's
        PQclear(r);
      }
    }
  }
  if (!complete && now >= c.deadline) {
    c.read = absl::DeadlineExceededError("statement " + c.statement +
                                         " had no answer within its statement timeout; its "
                                         "connection is dropped");
    c.Close();
    complete = true;
  }
  if (!complete) return std::nullopt;
  Result<SqlReply> answer = c.read.value_or(
      absl::InternalError("PostgreSQL answered statement " + c.statement + " with no result"));
  c.read.reset();
  if (absl::IsUnavailable(answer.status())) c.Close();
  return answer;
}

constexpr const char* kOneStatement =
    "a step asked PostgreSQL for a second statement; a step run by a pool of connections runs "
    "one";

}  // namespace

PostgresPool::PostgresPool(std::string conninfo, int connections, PostgresOptions options)
    : conninfo_(std::move(conninfo)), options_(options) {
  for (int i = 0; i < std::max(1, connections); ++i) {
    connections_.push_back(std::make_unique<Connection>());
  }
}

PostgresPool::~PostgresPool() = default;

Status PostgresPool::Open(Duration timeout) {
  for (const auto& c : connections_) {
    if (c->pg != nullptr) continue;
    const auto deadline = Steady::now() + std::chrono::duration_cast<Steady::duration>(timeout);
    if (Status s = ratelab::Open(*c, conninfo_, options_, deadline); !s.ok()) return s;
  }
  return absl::OkStatus();
}

Result<SqlReply> PostgresPool::Execute(const SqlStatement& statement,
                                       std::span<const std::string> params) {
  switch (mode_) {
    case Mode::kSend:
      if (++statements_ > 1) {
        sent_failed_ = absl::InternalError(kOneStatement);
      } else if (std::optional<Result<SqlReply>> now =
                     Send(*sending_on_, statement, params, conninfo_, options_, round_deadline_)) {
        sent_failed_ = *std::move(now);
      } else {
        sent_ = true;
      }
      return absl::UnavailableError("not answered yet");  // the replay answers
    case Mode::kReplay:
      if (++statements_ > 1) return absl::InternalError(kOneStatement);
      return std::move(replay_);
    case Mode::kDirect:
      break;
  }
  const auto idle = std::find_if(connections_.begin(), connections_.end(),
                                 [](const auto& c) { return c->step == nullptr; });
  if (idle == connections_.end()) {
    return absl::InternalError("every connection of the pool has a statement in flight");
  }
  Connection& c = **idle;
  if (std::optional<Result<SqlReply>> now = Send(c, statement, params, conninfo_, options_,
                                                 Steady::now() + options_.statement_timeout)) {
    return *std::move(now);
  }
  for (;;) {
    pollfd fd{PQsocket(c.pg), POLLIN, 0};
    const int ready = poll(&fd, 1, PollTimeoutMs(c.deadline));
    if (std::optional<Result<SqlReply>> answer = Collect(c, ready > 0, Steady::now())) {
      return *std::move(answer);
    }
  }
}

void PostgresPool::Answer(PendingStep& step, Result<SqlReply> answer) {
  mode_ = Mode::kReplay;
  statements_ = 0;
  replay_ = std::move(answer);
  step.Apply();
  mode_ = Mode::kDirect;
  step.resume.resume();
}

void PostgresPool::SendWaiting() {
  if (waiting_.empty()) return;
  // Open connections first: one the server dropped fails its step and is closed, rather than
  // waiting, stale, behind a closed one that cannot connect.
  std::vector<Connection*> order;
  for (const bool open : {true, false}) {
    for (const auto& c : connections_) {
      if ((c->pg != nullptr) == open) order.push_back(c.get());
    }
  }
  for (size_t i = 0; i < order.size() && !waiting_.empty();) {
    Connection& c = *order[i];
    if (c.step != nullptr) {
      ++i;
      continue;
    }
    const Waiting next = waiting_.front();
    waiting_.pop_front();
    PendingStep* step = next.step;
    if (Steady::now() >= next.deadline) {  // its time spent waiting for a connection
      Answer(*step, absl::DeadlineExceededError(
                        "PostgreSQL did not answer in time (every connection was busy)"));
      continue;
    }
    // Answered, connecting included, by its own deadline.
    round_deadline_ = next.deadline;
    mode_ = Mode::kSend;
    sending_on_ = &c;
    statements_ = 0;
    sent_ = false;
    sent_failed_.reset();
    step->Apply();
    mode_ = Mode::kDirect;
    sending_on_ = nullptr;
    if (sent_) {
      c.step = step;
      if (sent_failed_) c.refuse = sent_failed_->status();
      ++in_flight_;
      ++i;
    } else {
      // Answered at once; the connection is still idle for the next step.
      Answer(*step, sent_failed_ ? *std::move(sent_failed_)
                                 : Result<SqlReply>(absl::InternalError(
                                       "a step run by a pool of connections asked for nothing")));
    }
  }
}

void PostgresPool::Receive() {
  std::vector<pollfd> fds;
  std::vector<Connection*> busy;
  Steady::time_point first = Steady::time_point::max();
  for (const auto& c : connections_) {
    if (c->step == nullptr) continue;
    fds.push_back({PQsocket(c->pg), POLLIN, 0});
    busy.push_back(c.get());
    first = std::min(first, c->deadline);
  }
  if (busy.empty()) return;
  for (const Waiting& w : waiting_) first = std::min(first, w.deadline);  // to be answered then
  const int ready = poll(fds.data(), fds.size(), PollTimeoutMs(first));
  const Steady::time_point now = Steady::now();
  for (size_t i = 0; i < busy.size(); ++i) {
    Connection& c = *busy[i];
    std::optional<Result<SqlReply>> answer = Collect(c, ready > 0 && fds[i].revents != 0, now);
    if (!answer) continue;
    PendingStep* step = std::exchange(c.step, nullptr);
    --in_flight_;
    if (c.refuse) *answer = *std::exchange(c.refuse, std::nullopt);
    Answer(*step, *std::move(answer));
  }
}

bool PostgresPool::Turn() {
  if (waiting_.empty() && in_flight_ == 0) return false;
  SendWaiting();
  Receive();
  return true;
}

}  // namespace ratelab
