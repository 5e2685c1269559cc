#include "impl/store/postgres_pool.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <vector>

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

int PollTimeoutMs(Steady::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Steady::now());
  return static_cast<int>(std::clamp<int64_t>(left.count(), 0, INT_MAX));
}

constexpr const char* kOneStatement =
    "a step asked PostgreSQL for a second statement; a step run by a pool of connections runs "
    "one";

}  // namespace

// One connection, and what it is doing: nothing, or one call (connecting, setting the statement
// timeout, preparing, running) carried forward a step at a time as its socket is ready, never
// waiting for it (Progress).
struct PostgresPool::Connection {
  enum class Phase { kIdle, kConnecting, kSettingUp, kPreparing, kRunning };

  ~Connection() {
    if (pg != nullptr) PQfinish(pg);
  }
  // What its socket is waited on for now: POLLIN, POLLOUT, or 0 for nothing.
  short Events() const {
    switch (phase) {
      case Phase::kIdle:
        return 0;
      case Phase::kConnecting:
        return polled == PGRES_POLLING_READING ? POLLIN : POLLOUT;
      default:
        return static_cast<short>(POLLIN | (flushing ? POLLOUT : 0));
    }
  }

  PGconn* pg = nullptr;
  std::set<std::string, std::less<>> prepared;
  Phase phase = Phase::kIdle;
  PostgresPollingStatusType polled = PGRES_POLLING_WRITING;  // kConnecting: what it waits for
  bool flushing = false;  // libpq holds what it could not send yet
  // The call: its statement (none: only connect), by `deadline`.
  bool run_statement = false;
  std::string statement;  // its name
  std::string text;
  std::vector<std::string> params;
  Steady::time_point deadline;
  std::optional<Result<SqlReply>> read;  // the answer of the command in flight, as far as read
  // Of a step run by the pool: the step in flight, and the answer it gets instead of what
  // PostgreSQL says (it asked for more than one statement).
  PendingStep* step = nullptr;
  std::optional<Status> refuse;
  // What the pool's epoll set watches for it.
  int watched_fd = -1;
  uint32_t watched_events = 0;
};

namespace {

using Connection = PostgresPool::Connection;
using Phase = Connection::Phase;

// The answer `r` gives to the command last sent on `c`.
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

// Sends what libpq holds for `c` as far as the socket takes it now; an error when the connection
// is lost.
Status FlushSome(Connection& c) {
  const int left = PQflush(c.pg);
  if (left < 0) return Unavailable("PostgreSQL connection lost", c.pg);
  c.flushing = left > 0;
  return absl::OkStatus();
}

// Sends `c`'s statement with `params` (c.params unless given: the caller's, when it is sent at
// once), preparing it first once a connection; or, for a call that only connects, is done. The
// answer when it is complete at once (done, or failed), else nothing.
std::optional<Result<SqlReply>> SendStatement(
    Connection& c, std::optional<std::span<const std::string>> given = std::nullopt) {
  if (!c.run_statement) {
    c.phase = Phase::kIdle;
    return Result<SqlReply>(SqlReply());
  }
  const bool prepared = c.prepared.contains(c.statement);
  int sent = 0;
  if (!prepared) {
    sent = PQsendPrepare(c.pg, c.statement.c_str(), c.text.c_str(), 0, nullptr);
    c.phase = Phase::kPreparing;
    if (given) c.params.assign(given->begin(), given->end());  // sent once it is prepared
  } else {
    const std::span<const std::string> params = given ? *given : std::span(c.params);
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const std::string& p : params) values.push_back(p.c_str());
    sent = PQsendQueryPrepared(c.pg, c.statement.c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0);
    c.phase = Phase::kRunning;
  }
  c.read.reset();
  if (sent == 0) return Result<SqlReply>(Unavailable("PostgreSQL connection lost", c.pg));
  if (Status s = FlushSome(c); !s.ok()) return Result<SqlReply>(s);
  return std::nullopt;
}

// Starts `c`'s call of `statement` with `params` (none: only connect): connecting first when it
// has no connection. The answer when it is complete at once, else nothing (Progress carries it
// on).
std::optional<Result<SqlReply>> Begin(Connection& c, const std::string& conninfo,
                                      const SqlStatement* statement,
                                      std::span<const std::string> params) {
  c.run_statement = statement != nullptr;
  if (statement != nullptr) {
    c.statement.assign(statement->name.data(), statement->name.size());
    if (!c.prepared.contains(c.statement)) {
      c.text.assign(statement->text.data(), statement->text.size());
    }
  }
  if (c.pg != nullptr) return SendStatement(c, params);
  c.params.assign(params.begin(), params.end());  // sent once it is connected
  c.pg = PQconnectStart(conninfo.c_str());
  if (c.pg == nullptr || PQstatus(c.pg) == CONNECTION_BAD) {
    return Result<SqlReply>(Unavailable("cannot connect to PostgreSQL", c.pg));
  }
  c.phase = Phase::kConnecting;
  c.polled = PGRES_POLLING_WRITING;
  return std::nullopt;
}

// Carries `c`'s call on as far as its socket's `revents` let it, waiting for nothing: the answer
// once it is complete, else nothing. (A call that fails leaves the connection to be closed.)
std::optional<Result<SqlReply>> Progress(Connection& c, short revents,
                                         const PostgresOptions& options) {
  if (revents == 0) return std::nullopt;
  if (c.phase == Phase::kConnecting) {
    c.polled = PQconnectPoll(c.pg);
    if (c.polled == PGRES_POLLING_FAILED) {
      return Result<SqlReply>(Unavailable("cannot connect to PostgreSQL", c.pg));
    }
    if (c.polled != PGRES_POLLING_OK) return std::nullopt;
    const std::string set =
        "SET statement_timeout = " + std::to_string(options.statement_timeout.count());
    if (PQsetnonblocking(c.pg, 1) != 0 || PQsendQuery(c.pg, set.c_str()) == 0) {
      return Result<SqlReply>(Unavailable("cannot set up a PostgreSQL connection", c.pg));
    }
    c.phase = Phase::kSettingUp;
    c.read.reset();
    if (Status s = FlushSome(c); !s.ok()) return Result<SqlReply>(s);
    return std::nullopt;
  }
  if (c.flushing && (revents & POLLOUT) != 0) {
    if (Status s = FlushSome(c); !s.ok()) return Result<SqlReply>(s);
  }
  if ((revents & (POLLIN | POLLERR | POLLHUP)) == 0) return std::nullopt;
  if (PQconsumeInput(c.pg) == 0) {
    return Result<SqlReply>(Unavailable("PostgreSQL connection lost", c.pg));
  }
  while (PQisBusy(c.pg) == 0) {
    PGresult* r = PQgetResult(c.pg);
    if (r != nullptr) {
      if (!c.read) c.read = ReplyOf(r, c);  // the first result is the command's
      PQclear(r);
      continue;
    }
    // The command is complete.
    Result<SqlReply> answer = c.read.value_or(
        absl::InternalError("PostgreSQL answered statement " + c.statement + " with no result"));
    c.read.reset();
    switch (c.phase) {
      case Phase::kSettingUp:
        if (!answer.ok() || answer->is_error()) {
          return Result<SqlReply>(Unavailable("cannot set up a PostgreSQL connection", c.pg));
        }
        return SendStatement(c);
      case Phase::kPreparing:
        // The statement's own error at preparing is its answer.
        if (!answer.ok() || answer->is_error()) return answer;
        c.prepared.insert(c.statement);
        return SendStatement(c);
      default:
        c.phase = Phase::kIdle;
        return answer;
    }
  }
  return std::nullopt;
}

// The answer of a call past its deadline.
Result<SqlReply> TookTooLong(const Connection& c) {
  if (c.phase == Phase::kConnecting || c.phase == Phase::kSettingUp) {
    return absl::DeadlineExceededError("PostgreSQL did not answer in time (connecting)");
  }
  return absl::DeadlineExceededError("statement " + c.statement +
                                     " had no answer within its statement timeout; its "
                                     "connection is dropped");
}

}  // namespace

PostgresPool::PostgresPool(std::string conninfo, int connections, PostgresOptions options)
    : conninfo_(std::move(conninfo)), options_(options), epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  for (int i = 0; i < std::max(1, connections); ++i) {
    connections_.push_back(std::make_unique<Connection>());
  }
}

PostgresPool::~PostgresPool() {
  for (const auto& c : connections_) Drop(*c);
  if (epoll_ >= 0) close(epoll_);
}

void PostgresPool::Drop(Connection& c) {
  Watch(c, false);
  if (c.pg != nullptr) PQfinish(c.pg);
  c.pg = nullptr;
  c.prepared.clear();
  c.phase = Phase::kIdle;
  c.flushing = false;
  c.read.reset();
}

void PostgresPool::Watch(Connection& c, bool watch) {
  const int fd = watch && c.pg != nullptr ? PQsocket(c.pg) : -1;
  const short events = fd >= 0 ? c.Events() : 0;
  const uint32_t wanted =
      ((events & POLLIN) != 0 ? EPOLLIN : 0u) | ((events & POLLOUT) != 0 ? EPOLLOUT : 0u);
  if (c.watched_fd == (wanted != 0 ? fd : -1) && c.watched_events == wanted) return;
  if (c.watched_fd >= 0) epoll_ctl(epoll_, EPOLL_CTL_DEL, c.watched_fd, nullptr);
  c.watched_fd = -1;
  c.watched_events = 0;
  if (wanted == 0 || epoll_ < 0) return;
  epoll_event e{};
  e.events = wanted;
  e.data.ptr = &c;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &e) == 0) {
    c.watched_fd = fd;
    c.watched_events = wanted;
  }
}

Result<SqlReply> PostgresPool::Complete(Connection& c) {
  while (true) {
    pollfd p{PQsocket(c.pg), c.Events(), 0};
    const int ready = poll(&p, 1, PollTimeoutMs(c.deadline));
    short revents = ready > 0 ? p.revents : 0;
    // Another error than EINTR: libpq's next call says what is wrong with the connection.
    if (ready < 0 && errno != EINTR) revents = p.events;
    if (std::optional<Result<SqlReply>> answer = Progress(c, revents, options_)) {
      if (!answer->ok() && (absl::IsUnavailable(answer->status()) ||
                            c.phase == Phase::kConnecting || c.phase == Phase::kSettingUp)) {
        Drop(c);
      }
      return *std::move(answer);
    }
    if (Steady::now() >= c.deadline) {
      Result<SqlReply> late = TookTooLong(c);
      Drop(c);
      return late;
    }
  }
}

Status PostgresPool::Open(Duration timeout) {
  for (const auto& c : connections_) {
    if (c->pg != nullptr) continue;
    c->deadline = Steady::now() + std::chrono::duration_cast<Steady::duration>(timeout);
    std::optional<Result<SqlReply>> now = Begin(*c, conninfo_, nullptr, {});
    const Result<SqlReply> opened = now ? *std::move(now) : Complete(*c);
    if (!opened.ok()) {
      Drop(*c);
      return opened.status();
    }
  }
  return absl::OkStatus();
}

Result<SqlReply> PostgresPool::Execute(const SqlStatement& statement,
                                       std::span<const std::string> params) {
  switch (mode_) {
    case Mode::kSend: {
      if (++statements_ > 1) {
        sent_failed_ = absl::InternalError(kOneStatement);
        return absl::UnavailableError("not answered yet");
      }
      if (std::optional<Result<SqlReply>> now =
              Begin(*sending_on_, conninfo_, &statement, params)) {
        sent_failed_ = *std::move(now);
      } else {
        sent_ = true;
      }
      return absl::UnavailableError("not answered yet");  // the replay answers
    }
    case Mode::kReplay:
      if (++statements_ > 1) return absl::InternalError(kOneStatement);
      return std::move(replay_);
    case Mode::kDirect:
      break;
  }
  const auto idle = std::find_if(connections_.begin(), connections_.end(), [](const auto& c) {
    return c->step == nullptr && c->phase == Phase::kIdle;
  });
  if (idle == connections_.end()) {
    return absl::InternalError("every connection of the pool has a statement in flight");
  }
  Connection& c = **idle;
  c.deadline = Steady::now() + options_.statement_timeout;
  if (std::optional<Result<SqlReply>> now = Begin(c, conninfo_, &statement, params)) {
    if (!now->ok() && absl::IsUnavailable(now->status())) Drop(c);
    return *std::move(now);
  }
  return Complete(c);
}

void PostgresPool::Answer(PendingStep& step, Result<SqlReply> answer) {
  mode_ = Mode::kReplay;
  statements_ = 0;
  replay_ = std::move(answer);
  step.Apply();
  mode_ = Mode::kDirect;
  step.resume.resume();
}

void PostgresPool::Finish(Connection& c, Result<SqlReply> answer) {
  // A connection lost, or one whose call could not be completed (past its deadline, or while
  // connecting), is closed: the next call connects again.
  if (!answer.ok() &&
      (absl::IsUnavailable(answer.status()) || absl::IsDeadlineExceeded(answer.status()) ||
       c.phase == Phase::kConnecting || c.phase == Phase::kSettingUp)) {
    Drop(c);
  }
  PendingStep* step = std::exchange(c.step, nullptr);
  --in_flight_;
  if (c.refuse) answer = *std::exchange(c.refuse, std::nullopt);
  Answer(*step, std::move(answer));
}

void PostgresPool::SendWaiting() {
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
    c.deadline = next.deadline;
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
      // Answered at once; the connection is idle for the next step (or closed, if it failed).
      Result<SqlReply> answer = sent_failed_
                                    ? *std::move(sent_failed_)
                                    : Result<SqlReply>(absl::InternalError(
                                          "a step run by a pool of connections asked for nothing"));
      if (!answer.ok() && absl::IsUnavailable(answer.status())) Drop(c);
      Answer(*step, std::move(answer));
    }
  }
}

void PostgresPool::Advance() {
  std::vector<pollfd> fds;
  std::vector<Connection*> busy;
  for (const auto& c : connections_) {
    if (c->step == nullptr) continue;
    fds.push_back({c->pg != nullptr ? PQsocket(c->pg) : -1, c->Events(), 0});
    busy.push_back(c.get());
  }
  if (!fds.empty() && poll(fds.data(), fds.size(), 0) < 0) {
    for (pollfd& p : fds) p.revents = 0;
  }
  const Steady::time_point now = Steady::now();
  for (size_t i = 0; i < busy.size(); ++i) {
    Connection& c = *busy[i];
    std::optional<Result<SqlReply>> answer = Progress(c, fds[i].revents, options_);
    if (!answer && now >= c.deadline) answer = TookTooLong(c);
    if (answer) Finish(c, *std::move(answer));
  }
  SendWaiting();
  for (const auto& c : connections_) Watch(*c, c->step != nullptr);
}

std::optional<std::chrono::steady_clock::time_point> PostgresPool::deadline() const {
  std::optional<Steady::time_point> first;
  const auto take = [&](Steady::time_point t) { first = first ? std::min(*first, t) : t; };
  for (const auto& c : connections_) {
    if (c->step != nullptr) take(c->deadline);
  }
  for (const Waiting& w : waiting_) take(w.deadline);
  return first;
}

void PostgresPool::Wait() {
  const std::optional<Steady::time_point> until = deadline();
  if (!until) return;
  epoll_event events[16];
  epoll_wait(epoll_, events, 16, PollTimeoutMs(*until));
}

bool PostgresPool::Turn() {
  if (!busy()) return false;
  Advance();
  if (busy()) {
    Wait();
    Advance();
  }
  return true;
}

void PostgresPool::Run() {
  Advance();
  while (busy()) {
    Wait();
    Advance();
  }
}

}  // namespace ratelab
