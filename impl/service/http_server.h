// The HTTP/1.1 server `ratelab serve` runs: Boost.Beast over Asio (chosen by measurement against
// cpp-httplib, docs/design.md), keep-alive, a bounded request body (413 past it) and header (431
// past it), a read timeout and an idle timeout per connection, a bound on open connections, and
// a graceful stop: Stop() closes the listening socket, lets every request already read be
// answered, and closes connections as they go idle.
//
// It faces the public: no bytes and no pattern of connections a client sends may end the process
// or stop it accepting. An exception from a handler is a 500; one from anywhere else in a
// connection's work closes that connection, and the thread goes on. An error accepting (no file
// descriptor left, EMFILE) is retried after a pause that doubles from 10 ms to a second.
//
// Every connection waiting to be accepted is taken at once (up to 256 beside the first), so that
// the requests come in as one batch even when a handler makes its thread wait.
//
// It only carries requests: each is handed to a handler as an HttpRequest and its answer written
// back. The server runs one thread a handler; connections are handed to the threads in turn,
// and each thread's handler is called on that thread only, with the requests that thread read
// together (a BatchHandler), or one at a time (a Handler), or with the requests read together
// and a place for each answer, which it may fill after it returns while the thread goes on
// reading and writing its other connections (a LaterHandler: serve on Redis, whose round to the
// store is in flight meanwhile, and on PostgreSQL, whose pool's calls are).
#ifndef RATELAB_IMPL_SERVICE_HTTP_SERVER_H_
#define RATELAB_IMPL_SERVICE_HTTP_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/service/http.h"
#include "model/time.h"

namespace ratelab {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (HttpServer::port says which)
  size_t max_body_bytes = 64 * 1024;
  Duration read_timeout = std::chrono::seconds(10);  // to read one request once it has begun
  Duration idle_timeout = std::chrono::seconds(60);  // a kept-alive connection with no request
  size_t max_header_bytes = 8 * 1024;                // the request line and headers; 431 past it
  // The most connections open at once (0: no bound). A connection accepted past it closes the
  // oldest idle connection of the thread it goes to, or, when that thread has none idle, is
  // closed at once (counted as refused).
  size_t max_connections = 0;
  // Where the server tells its operator what went wrong that no client is told (an accept error,
  // an exception outside a handler); none: not told. Called on the server's threads.
  std::function<void(std::string_view line)> log;
};

// What a server counts of its connections, for its operator (GET /metrics).
struct HttpServerCounts {
  int64_t open = 0;             // connections open now
  int64_t closed_for_room = 0;  // idle connections closed to make room for a new one
  int64_t refused = 0;          // connections closed at once: no room, and none idle to close
  int64_t accept_errors = 0;    // accepts that failed (each retried after a pause)
};

// The most connections `serve` keeps open by default: below the process's file descriptor limit
// (RLIMIT_NOFILE, whose soft limit this raises to the hard one first) by `reserved` (store
// connections, files), and at most 10,000.
size_t DefaultMaxConnections(size_t reserved);

// "HOST:PORT" (an IPv4 address, or [IPv6]:PORT; port 0 for any free one) into `options`;
// InvalidArgument saying what is wrong.
Status ParseListenAddress(std::string_view text, HttpServerOptions& options);

class HttpServer {
 public:
  class Session;  // one connection: defined where the server is implemented

  // Where one request's answer goes: called once, on the thread that read the request. One
  // destroyed without being called answers 500 (a handler that lost it, or threw).
  class Answer {
   public:
    explicit Answer(std::shared_ptr<Session> session);
    Answer(Answer&& other) noexcept = default;
    Answer& operator=(Answer&& other) noexcept;
    Answer(const Answer&) = delete;
    Answer& operator=(const Answer&) = delete;
    ~Answer();
    // Writes `response` out at once (a connection buffers what it writes): the caller keeps it,
    // and the room of its body and headers.
    void operator()(const HttpResponse& response);

   private:
    std::shared_ptr<Session> session_;  // none once answered
  };

  // A thread's handler that answers after it returns: Take starts deciding the requests the
  // thread read together, and answers each through its Answer, at once or later; the thread
  // asks Waiting what to wait for before it calls Waited, and meanwhile reads and writes its
  // other connections, handing their requests to Take too. Called on its thread only.
  class LaterHandler {
   public:
    // A descriptor to wait for, readable, until `deadline` at the latest. `connection` tells one
    // connection from the next that has the same descriptor number. The thread watches a
    // duplicate of it; the handler does its own reading, with the descriptor blocking or not as
    // it left it.
    struct Wait {
      int fd = -1;
      int64_t connection = 0;
      std::chrono::steady_clock::time_point deadline;
    };
    virtual ~LaterHandler() = default;
    virtual void Take(std::span<const HttpRequest* const> requests, std::span<Answer> answers) = 0;
    // What to wait for now; none when nothing is. Asked after each Take and each Waited. While
    // the thread waits on a descriptor, Take must leave it open.
    virtual std::optional<Wait> Waiting() = 0;
    // The wait is over: the descriptor is readable (true), or the deadline came first (false).
    virtual void Waited(bool readable) = 0;
  };

  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // A handler that writes its answer in `answer`: empty, with the memory of an answer the thread
  // wrote out before (HttpResponse::Clear), for the new one to be written in.
  using AnswerInRoom = std::function<void(const HttpRequest&, HttpResponse& answer)>;
  // Answers the requests a thread read together (every connection whose request was in when the
  // thread looked), answers[i] to requests[i], all before it returns. Each answers[i] is empty,
  // with the room of an answer written out before (AnswerInRoom).
  using BatchHandler = std::function<void(std::span<const HttpRequest* const> requests,
                                          std::span<HttpResponse> answers)>;
  // `handler` called for each request in turn; an exception it throws is a 500.
  static BatchHandler OneByOne(Handler handler);
  static BatchHandler OneByOne(AnswerInRoom handler);
  // `handler` as a LaterHandler that answers every request before Take returns.
  static std::unique_ptr<LaterHandler> Batched(BatchHandler handler);

  // Listens on options.host:options.port. InvalidArgument for a host that is not an address,
  // Unavailable when the port cannot be had (in use, or not allowed).
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    Handler handler);
  // The same with a thread for each of `handlers` (at least one).
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    std::vector<Handler> handlers);
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    std::vector<BatchHandler> handlers);
  static Result<std::unique_ptr<HttpServer>> Listen(
      const HttpServerOptions& options, std::vector<std::unique_ptr<LaterHandler>> handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;
  int threads() const;
  // Serves until Stop, on the calling thread and threads()-1 of its own.
  void Run();
  // Stops gracefully (from any thread, or a signal handler's thread): Run returns once every
  // request read has been answered.
  void Stop();
  // Requests answered so far.
  int64_t answered() const;
  // Its connections now. Thread-safe.
  HttpServerCounts counts() const;

  // The server's state, defined where it is implemented.
  struct State;

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// What the server does with the bytes a connection sends, without the network (for the fuzzer
// and tests): each request read from `bytes` by the server's own parser and limits, answered by
// `handler` (a 500 for one that throws), until the bytes end (a request cut short is not
// answered), a request asks to close, or one cannot be read (answered with its 400, 413 or 431).
// Each exchange: the request's method ("" when its line could not be read) and the bytes the
// server writes back.
struct ServedExchange {
  std::string method;
  std::string bytes;
};
std::vector<ServedExchange> ServeBytes(std::string_view bytes, const HttpServerOptions& options,
                                       const HttpServer::Handler& handler);

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HTTP_SERVER_H_
