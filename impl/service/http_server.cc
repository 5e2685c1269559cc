#include "impl/service/http_server.h"

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <fcntl.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cstddef>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "impl/service/http_wire.h"

namespace ratelab {

using tcp = net::ip::tcp;

using Session = HttpServer::Session;

namespace {

std::chrono::steady_clock::duration Steady(Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
}

// A socket of one io_context's executor (not a type-erased one: each operation copies it).
using Socket = net::basic_stream_socket<tcp, net::io_context::executor_type>;
using SteadyTime = std::chrono::steady_clock::time_point;

// Memory for a connection's asynchronous operations (Asio allocates each from its handler's
// associated allocator): a read and a write, and what they post, in flight at once, each reused
// from one request to the next, so that an operation costs no allocation. (Boost 1.74's read of
// a request takes 264 bytes, a write 168.) A block larger than a slot, or one more than there
// are slots free, comes from operator new.
class HandlerMemory {
 public:
  void* Allocate(size_t bytes) {
    for (Slot& slot : slots_) {
      if (!slot.used && bytes <= sizeof(slot.bytes)) {
        slot.used = true;
        return slot.bytes;
      }
    }
    return ::operator new(bytes);
  }
  void Deallocate(void* p) {
    for (Slot& slot : slots_) {
      if (p == slot.bytes) {
        slot.used = false;
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  struct Slot {
    alignas(std::max_align_t) std::byte bytes[320];
    bool used = false;
  };
  std::array<Slot, 3> slots_;
};

// An allocator of a HandlerMemory's blocks, for Asio.
template <typename T>
class HandlerAllocator {
 public:
  using value_type = T;
  explicit HandlerAllocator(HandlerMemory& memory) : memory_(&memory) {}
  template <typename U>
  HandlerAllocator(const HandlerAllocator<U>& other) : memory_(other.memory()) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(memory_->Allocate(sizeof(T) * n)); }
  void deallocate(T* p, size_t) { memory_->Deallocate(p); }
  HandlerMemory* memory() const { return memory_; }
  template <typename U>
  bool operator==(const HandlerAllocator<U>& other) const {
    return memory_ == other.memory();
  }

 private:
  HandlerMemory* memory_;
};

// `handler` with its operations' memory from `memory`.
template <typename Handler>
class WithMemory {
 public:
  using allocator_type = HandlerAllocator<Handler>;
  WithMemory(HandlerMemory& memory, Handler handler)
      : memory_(&memory), handler_(std::move(handler)) {}
  allocator_type get_allocator() const noexcept { return allocator_type(*memory_); }
  template <typename... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  HandlerMemory* memory_;
  Handler handler_;
};

// A BatchHandler as a LaterHandler that answers every request before it returns.
class BatchedHandler final : public HttpServer::LaterHandler {
 public:
  explicit BatchedHandler(HttpServer::BatchHandler handler) : handler_(std::move(handler)) {}
  void Take(std::span<const HttpRequest* const> requests,
            std::span<HttpServer::Answer> answers) override {
    if (out_.size() < requests.size()) out_.resize(requests.size());
    const std::span<HttpResponse> out = std::span(out_).first(requests.size());
    try {
      handler_(requests, out);
    } catch (const std::exception&) {
      for (HttpResponse& a : out) a = InternalError();
    }
    for (size_t i = 0; i < out.size(); ++i) {
      answers[i](out[i]);
      out[i].Clear();
    }
  }
  std::optional<Wait> Waiting() override { return std::nullopt; }
  void Waited(bool) override {}

 private:
  HttpServer::BatchHandler handler_;
  // Room for the answers of a batch: as many as the largest batch yet, each written out and
  // cleared, keeping its memory (HttpResponse::Clear) for the handler's next answer there.
  std::vector<HttpResponse> out_;
};

// One thread of the server: its io_context, its handler, and the connections it carries.
struct Worker {
  explicit Worker(std::unique_ptr<HttpServer::LaterHandler> h) : handler(std::move(h)) {}

  // Connections whose request is read and waits for the handler, answered together once the
  // thread has taken in everything ready (AnswerReady).
  std::vector<std::shared_ptr<Session>> ready;
  // The batch AnswerReady hands the handler, and its requests and answers: kept from batch to
  // batch for their room, so that a batch allocates nothing.
  std::vector<std::shared_ptr<Session>> taking;
  std::vector<const HttpRequest*> taking_requests;
  std::vector<HttpServer::Answer> taking_answers;
  // Declared before the io_context, so destroyed after it: the handlers it destroys may hold
  // the last reference to a session, which takes itself out of this set.
  std::set<Session*> sessions;  // open connections, on the worker's thread only
  bool stopping = false;        // on the worker's thread only
  net::io_context ioc{1};
  // Keeps run() going while the worker has no connection, until the stop.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work{
      net::make_work_guard(ioc)};
  // Wakes the worker to close the connections past their time (Sweep).
  net::basic_waitable_timer<std::chrono::steady_clock, net::wait_traits<std::chrono::steady_clock>,
                            net::io_context::executor_type>
      sweeper{ioc.get_executor()};
  // What the handler waits for (LaterHandler::Waiting): a duplicate of its descriptor, which
  // the io_context watches, the descriptor and connection it stands for, and the deadline.
  std::optional<net::posix::basic_stream_descriptor<net::io_context::executor_type>> store;
  int store_fd = -1;
  int64_t store_connection = 0;
  bool waiting = false;
  int64_t waits = 0;  // the number of the wait armed last
  net::basic_waitable_timer<std::chrono::steady_clock, net::wait_traits<std::chrono::steady_clock>,
                            net::io_context::executor_type>
      deadline{ioc.get_executor()};
  // Declared after the io_context, so destroyed before it: the answers it still holds are
  // written (500) while the io_context can take the writes.
  std::unique_ptr<HttpServer::LaterHandler> handler;

  void StopOnThread();
  // Runs the io_context until it is out of work. An exception that escapes a completion handler
  // (a connection's work) is told to `log` and the loop goes on: the connection whose handler
  // threw has nothing pending and closes as its last reference goes.
  void Run(const std::function<void(std::string_view)>& log);
  // Closes the connection that has waited longest for its next request; false when none waits.
  bool CloseOldestIdle();
  // Queues `s`'s request for the handler.
  void Ready(std::shared_ptr<Session> s);
  void AnswerReady();
  // Waits for what the handler waits for, if it does and no wait is armed; calls Waited when
  // the wait is over.
  void Await();
  // Tells the handler the wait is over, and waits again if it says to.
  void Waited(bool readable);
  // Closes every connection past its deadline, and again every `period` while the worker runs
  // or still has connections.
  void Sweep(const HttpServerOptions& options, Duration period);
};

// The most connections one accept takes beside its own, when they wait together.
constexpr int kAcceptedAtOnce = 256;

// How often a worker looks for connections past their time: a quarter of the shorter timeout,
// from 10 ms to a second. A timeout takes effect up to one period late, and no request pays
// for a timer of its own.
Duration SweepPeriod(const HttpServerOptions& options) {
  return std::clamp<Duration>(std::min(options.read_timeout, options.idle_timeout) / 4,
                              std::chrono::milliseconds(10), std::chrono::seconds(1));
}

}  // namespace

struct HttpServer::State {
  explicit State(HttpServerOptions o) : options(std::move(o)) {}

  HttpServerOptions options;
  std::vector<std::unique_ptr<Worker>> workers;  // the acceptor's is the first
  std::atomic<int64_t> answered{0};
  std::atomic<int64_t> open{0};  // sessions alive, on every worker
  std::atomic<int64_t> closed_for_room{0};
  std::atomic<int64_t> refused{0};
  std::atomic<int64_t> accept_errors{0};
  uint16_t port = 0;                      // bound, set before the server's threads start
  size_t next = 0;                        // the worker the next connection goes to
  std::optional<tcp::acceptor> acceptor;  // on workers[0]'s io_context; destroyed before them
  // The pause before accepting again after an error (none: the last accept succeeded), and the
  // timer that waits it out; on workers[0]'s thread.
  Duration accept_pause{0};
  std::optional<net::steady_timer> accept_retry;

  void Accept();
  // Takes `socket` in on `to`'s thread: a session, unless the server is full and `to` has no
  // idle connection to close for it.
  void TakeIn(Worker& to, Socket socket);
  void Log(std::string_view line) const {
    if (options.log) options.log(line);
  }
};

// One connection: read a request, answer it, and again while it is kept alive.
class HttpServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Socket socket, HttpServer::State& state, Worker& worker)
      : socket_(std::move(socket)),
        buffer_(ReadBufferBytes(state.options)),
        state_(state),
        worker_(worker) {
    worker_.sessions.insert(this);
    state_.open.fetch_add(1, std::memory_order_relaxed);
  }
  ~Session() {
    state_.open.fetch_sub(1, std::memory_order_relaxed);
    worker_.sessions.erase(this);
    // The last connection of a stopping worker gone: nothing is left to sweep.
    if (worker_.stopping && worker_.sessions.empty()) worker_.sweeper.cancel();
  }

  void Read() {
    if (worker_.stopping) return Close();
    parser_.emplace(request_, state_.options);
    Enter(Phase::kIdle);
    idle_since_ = std::chrono::steady_clock::now();
    http::async_read(socket_, buffer_, *parser_,
                     WithMemory(memory_, [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Failed(ec);
                       self->Enter(Phase::kAnswering);
                       self->worker_.Ready(self);
                     }));
  }

  // A connection waiting for its next request is closed by a stop; one in the middle of a
  // request is answered first.
  void CloseIfIdle() {
    if (Idle()) Close();
  }
  // Since when the connection has waited for its next request; none when it is not waiting.
  std::optional<SteadyTime> IdleSince() const {
    if (!Idle() || closed_) return std::nullopt;
    return idle_since_;
  }
  void Close() {
    closed_ = true;
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    socket_.close(ignored);
  }

  const HttpRequest& request() const { return request_; }
  bool keep_alive() const { return parser_->keep_alive(); }

  // Writes `answer` out, then reads the next request unless the connection closes.
  void Answer(const HttpResponse& answer) { Write(answer, keep_alive()); }

  // Closes the connection when it is past its time: `idle_timeout` waiting for a request,
  // `read_timeout` reading or writing one. The deadline is set at the first sweep that sees
  // the connection in its phase, so it is up to a sweep period late.
  void Sweep(SteadyTime now) {
    if (phase_ == Phase::kIdle && !Idle()) Enter(Phase::kReading);
    if (phase_ == Phase::kAnswering) return;
    if (!deadline_) {
      deadline_ = now + Steady(phase_ == Phase::kIdle ? state_.options.idle_timeout
                                                      : state_.options.read_timeout);
    } else if (now >= *deadline_) {
      Close();
    }
  }

 private:
  enum class Phase { kIdle, kReading, kAnswering, kWriting };

  void Enter(Phase phase) {
    phase_ = phase;
    deadline_.reset();
  }
  // Waiting for a request of which nothing has come.
  bool Idle() const {
    return phase_ == Phase::kIdle && buffer_.size() == 0 && !parser_->got_some();
  }

  // A request that could not be read: answered when it was the client's fault, then closed.
  void Failed(beast::error_code ec) {
    if (std::optional<HttpResponse> answer = UnreadableAnswer(ec, *parser_, state_.options)) {
      return Write(*answer, false);
    }
    Close();
  }

  void Write(const HttpResponse& answer, bool keep_alive) {
    Enter(Phase::kWriting);
    keep_alive = keep_alive && !worker_.stopping;
    out_.clear();
    const bool head = parser_ && parser_->is_header_done() && request_.method == "HEAD";
    WriteAnswer(answer, parser_ ? parser_->version() : 11, keep_alive, head, out_);
    net::async_write(
        socket_, net::buffer(out_),
        WithMemory(memory_, [self = shared_from_this(), keep_alive](beast::error_code ec, size_t) {
          self->state_.answered.fetch_add(1, std::memory_order_relaxed);
          if (ec || !keep_alive) return self->Close();
          self->Read();
        }));
  }

  Socket socket_;
  // What was read and the parser has not taken: at most ReadBufferBytes (buffer_overflow past
  // it, a 400), since the parser takes a body as it comes.
  beast::flat_buffer buffer_;
  std::optional<RequestReader> parser_;  // of the request being read or answered
  HttpServer::State& state_;
  Worker& worker_;
  Phase phase_ = Phase::kIdle;
  bool closed_ = false;
  SteadyTime idle_since_;               // when the last Read began
  std::optional<SteadyTime> deadline_;  // none until a sweep sees the phase
  HttpRequest request_;                 // the request being read or answered
  std::string out_;                     // the answer being written
  HandlerMemory memory_;                // for the reads and writes in flight
};

HttpServer::Answer::Answer(std::shared_ptr<Session> session) : session_(std::move(session)) {}

HttpServer::Answer& HttpServer::Answer::operator=(Answer&& other) noexcept {
  if (this != &other) {
    if (session_) session_->Answer(InternalError());
    session_ = std::move(other.session_);
  }
  return *this;
}

HttpServer::Answer::~Answer() {
  if (session_) session_->Answer(InternalError());
}

void HttpServer::Answer::operator()(const HttpResponse& response) {
  if (!session_) return;
  std::exchange(session_, nullptr)->Answer(response);
}

namespace {

void Worker::Ready(std::shared_ptr<Session> s) {
  ready.push_back(std::move(s));
  // Answered once every completion the thread has in hand has been taken in: each connection
  // whose request came in the same poll is in the batch.
  if (ready.size() == 1) net::post(ioc, [this] { AnswerReady(); });
}

void Worker::AnswerReady() {
  taking.swap(ready);  // `ready` empty, with the room `taking` had
  for (const std::shared_ptr<Session>& s : taking) taking_requests.push_back(&s->request());
  for (std::shared_ptr<Session>& s : taking) taking_answers.emplace_back(std::move(s));
  taking.clear();
  // An answer the handler neither gave nor kept, because it threw, is a 500 as the batch is
  // cleared (after Await, either way).
  struct Cleared {
    Worker& worker;
    ~Cleared() {
      worker.taking_requests.clear();
      worker.taking_answers.clear();
    }
  } cleared{*this};
  try {
    handler->Take(taking_requests, taking_answers);
  } catch (...) {
    Await();
    throw;
  }
  Await();
}

void Worker::Await() {
  if (waiting) return;
  const std::optional<HttpServer::LaterHandler::Wait> wait = handler->Waiting();
  // The thread watches a duplicate of the handler's descriptor, its own to close: the handler
  // may close its own at any time, and its number be given to anything else (on any thread)
  // while the thread still watches it. The duplicate is let go as soon as the handler waits on
  // another connection, or on none, so a connection the handler closed is not kept open.
  if (store && (!wait || store_connection != wait->connection || store_fd != wait->fd)) {
    store.reset();
  }
  if (!wait) return;
  waiting = true;
  if (!store) {
    const int own = fcntl(wait->fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) {
      // No descriptor left to watch it with: the wait is over, past its deadline.
      net::post(ioc, [this] { Waited(false); });
      return;
    }
    store.emplace(ioc.get_executor(), own);
    store_fd = wait->fd;
    store_connection = wait->connection;
  }
  const int64_t number = ++waits;
  deadline.expires_at(wait->deadline);
  deadline.async_wait([this, number](beast::error_code ec) {
    if (!ec && waiting && waits == number) store->cancel();
  });
  store->async_wait(net::posix::descriptor_base::wait_read,
                    [this](beast::error_code ec) { Waited(!ec); });
}

void Worker::Waited(bool readable) {
  waiting = false;
  deadline.cancel();
  if (store) {
    // Asio made the descriptor non-blocking to wait on it (a flag the handler's descriptor
    // shares); the handler's own reads may block.
    beast::error_code ignored;
    store->native_non_blocking(false, ignored);
  }
  try {
    handler->Waited(readable);
  } catch (...) {
    Await();
    throw;
  }
  Await();
}

void Worker::Run(const std::function<void(std::string_view)>& log) {
  while (true) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      if (log) log(std::string("a connection's work failed and was dropped: ") + e.what());
    } catch (...) {
      if (log) log("a connection's work failed and was dropped");
    }
  }
}

bool Worker::CloseOldestIdle() {
  Session* oldest = nullptr;
  SteadyTime since{};
  for (Session* s : sessions) {
    const std::optional<SteadyTime> idle = s->IdleSince();
    if (idle && (oldest == nullptr || *idle < since)) oldest = s, since = *idle;
  }
  if (oldest == nullptr) return false;
  oldest->Close();
  return true;
}

void Worker::Sweep(const HttpServerOptions& options, Duration period) {
  const SteadyTime now = std::chrono::steady_clock::now();
  for (Session* s : std::set<Session*>(sessions)) s->Sweep(now);
  if (stopping && sessions.empty()) return;
  sweeper.expires_at(now + Steady(period));
  sweeper.async_wait([this, &options, period](beast::error_code ec) {
    if (!ec) Sweep(options, period);
  });
}

}  // namespace

void HttpServer::State::Accept() {
  Worker& to = *workers[next];
  acceptor->async_accept(to.ioc, [this, &to](beast::error_code ec, Socket socket) {
    if (!acceptor->is_open()) return;  // closed: a stop
    if (ec) {
      // Most often no descriptor is left (EMFILE, ENFILE): the connection waits in the backlog
      // until one is, so wait too, longer each time, and try again.
      accept_errors.fetch_add(1, std::memory_order_relaxed);
      const bool first = accept_pause == Duration(0);
      accept_pause = first ? Duration(std::chrono::milliseconds(10))
                           : std::min<Duration>(accept_pause * 2, std::chrono::seconds(1));
      if (first) Log("cannot accept a connection (" + ec.message() + "); trying again");
      if (!accept_retry) accept_retry.emplace(workers[0]->ioc);
      accept_retry->expires_after(Steady(accept_pause));
      accept_retry->async_wait([this](beast::error_code waited) {
        if (!waited && acceptor->is_open()) Accept();
      });
      return;
    }
    accept_pause = Duration(0);
    next = (next + 1) % workers.size();
    socket.set_option(tcp::no_delay(true), ec);
    net::post(to.ioc,
              [this, &to, socket = std::move(socket)]() mutable { TakeIn(to, std::move(socket)); });
    // Every connection already waiting is taken now, not one a turn of the loop: a thread whose
    // handler waits on its store (PostgreSQL's rounds) would otherwise read one request a round,
    // each a round's wait after the last (60 decisions on a stalled store took 15 s to answer).
    // (Only while there is room: past the bound on connections, one a turn, each taken in by
    // closing an idle one, so that no more descriptors are held than the bound.)
    int room = kAcceptedAtOnce;
    if (options.max_connections > 0) {
      const int64_t free = static_cast<int64_t>(options.max_connections) -
                           open.load(std::memory_order_relaxed) - 1;  // this one's
      room = static_cast<int>(std::clamp<int64_t>(free, 0, kAcceptedAtOnce));
    }
    for (int taken = 0; taken < room; ++taken) {
      Worker& more_to = *workers[next];
      Socket more(more_to.ioc.get_executor());
      acceptor->accept(more, ec);  // non-blocking: would_block once none waits
      if (ec) break;
      next = (next + 1) % workers.size();
      more.set_option(tcp::no_delay(true), ec);
      net::post(more_to.ioc, [this, &more_to, more = std::move(more)]() mutable {
        TakeIn(more_to, std::move(more));
      });
    }
    Accept();
  });
}

void HttpServer::State::TakeIn(Worker& to, Socket socket) {
  if (options.max_connections > 0 &&
      open.load(std::memory_order_relaxed) >= static_cast<int64_t>(options.max_connections)) {
    if (to.CloseOldestIdle()) {
      closed_for_room.fetch_add(1, std::memory_order_relaxed);
    } else {
      refused.fetch_add(1, std::memory_order_relaxed);
      beast::error_code ignored;
      socket.close(ignored);
      return;
    }
  }
  std::make_shared<Session>(std::move(socket), *this, to)->Read();
}

void Worker::StopOnThread() {
  if (stopping) return;
  stopping = true;
  for (Session* s : std::set<Session*>(sessions)) s->CloseIfIdle();
  if (sessions.empty()) sweeper.cancel();
  work.reset();
}

Status ParseListenAddress(std::string_view text, HttpServerOptions& options) {
  const size_t colon = text.rfind(':');
  const auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError("'" + std::string(text) + "' " + why +
                                      " (expected HOST:PORT, as 127.0.0.1:8080)");
  };
  if (colon == std::string_view::npos) return bad("has no port");
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code ec;
  net::ip::make_address(host, ec);
  if (ec) return bad("does not start with an IP address");
  const std::string_view port = text.substr(colon + 1);
  int value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9' || value > 65535) return bad("has no port from 0 to 65535");
    value = value * 10 + (c - '0');
  }
  if (port.empty() || value > 65535) return bad("has no port from 0 to 65535");
  options.host = host;
  options.port = static_cast<uint16_t>(value);
  return absl::OkStatus();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(const HttpServerOptions& options,
                                                       Handler handler) {
  std::vector<Handler> one;
  one.push_back(std::move(handler));
  return Listen(options, std::move(one));
}

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(const HttpServerOptions& options,
                                                       std::vector<Handler> handlers) {
  std::vector<BatchHandler> batches;
  for (Handler& h : handlers) batches.push_back(OneByOne(std::move(h)));
  return Listen(options, std::move(batches));
}

std::unique_ptr<HttpServer::LaterHandler> HttpServer::Batched(BatchHandler handler) {
  return std::make_unique<BatchedHandler>(std::move(handler));
}

HttpServer::BatchHandler HttpServer::OneByOne(Handler handler) {
  return OneByOne(AnswerInRoom(
      [handler = std::move(handler)](const HttpRequest& request, HttpResponse& answer) {
        answer = handler(request);
      }));
}

HttpServer::BatchHandler HttpServer::OneByOne(AnswerInRoom handler) {
  return [handler = std::move(handler)](std::span<const HttpRequest* const> requests,
                                        std::span<HttpResponse> answers) {
    for (size_t i = 0; i < requests.size(); ++i) {
      try {
        handler(*requests[i], answers[i]);
      } catch (const std::exception&) {
        answers[i] = InternalError();
      }
    }
  };
}

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(const HttpServerOptions& options,
                                                       std::vector<BatchHandler> handlers) {
  std::vector<std::unique_ptr<LaterHandler>> later;
  for (BatchHandler& h : handlers) later.push_back(Batched(std::move(h)));
  return Listen(options, std::move(later));
}

Result<std::unique_ptr<HttpServer>> HttpServer::Listen(
    const HttpServerOptions& options, std::vector<std::unique_ptr<LaterHandler>> handlers) {
  if (handlers.empty()) return absl::InvalidArgumentError("a server needs at least one thread");
  auto state = std::make_unique<State>(options);
  for (std::unique_ptr<LaterHandler>& h : handlers) {
    state->workers.push_back(std::make_unique<Worker>(std::move(h)));
  }
  state->acceptor.emplace(state->workers[0]->ioc);
  tcp::acceptor& acceptor = *state->acceptor;
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) {
    return absl::InvalidArgumentError("'" + options.host + "' is not an IP address to listen on");
  }
  const tcp::endpoint endpoint(address, options.port);
  const std::string where = options.host + ":" + std::to_string(options.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError("cannot listen on " + where + ": " + ec.message());
  if (!ec) acceptor.non_blocking(true, ec);  // Accept takes what waits, and no more
  if (ec) return absl::UnavailableError("cannot listen on " + where + ": " + ec.message());
  state->port = acceptor.local_endpoint(ec).port();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() = default;

uint16_t HttpServer::port() const { return state_->port; }

int HttpServer::threads() const { return static_cast<int>(state_->workers.size()); }

void HttpServer::Run() {
  std::vector<std::thread> others;
  for (size_t i = 1; i < state_->workers.size(); ++i) {
    others.emplace_back(
        [w = state_->workers[i].get(), &log = state_->options.log] { w->Run(log); });
  }
  const Duration period = SweepPeriod(state_->options);
  for (const std::unique_ptr<Worker>& w : state_->workers) {
    net::post(w->ioc,
              [w = w.get(), &options = state_->options, period] { w->Sweep(options, period); });
  }
  state_->Accept();
  state_->workers[0]->Run(state_->options.log);
  for (std::thread& t : others) t.join();
}

void HttpServer::Stop() {
  State* state = state_.get();
  net::post(state->workers[0]->ioc, [state] {
    beast::error_code ignored;
    state->acceptor->close(ignored);
    if (state->accept_retry) state->accept_retry->cancel();
    for (const std::unique_ptr<Worker>& w : state->workers) {
      net::post(w->ioc, [w = w.get()] { w->StopOnThread(); });
    }
  });
}

int64_t HttpServer::answered() const { return state_->answered.load(std::memory_order_relaxed); }

HttpServerCounts HttpServer::counts() const {
  return HttpServerCounts{state_->open.load(std::memory_order_relaxed),
                          state_->closed_for_room.load(std::memory_order_relaxed),
                          state_->refused.load(std::memory_order_relaxed),
                          state_->accept_errors.load(std::memory_order_relaxed)};
}

size_t DefaultMaxConnections(size_t reserved) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1000;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max == RLIM_INFINITY ? rlim_t{1} << 20 : limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  const size_t descriptors = limit.rlim_cur == RLIM_INFINITY ? size_t{1} << 20 : limit.rlim_cur;
  const size_t room = descriptors > reserved + 16 ? descriptors - reserved : 16;
  return std::min<size_t>(room, 10000);
}

}  // namespace ratelab
