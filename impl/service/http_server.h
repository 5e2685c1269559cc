// The HTTP/1.1 server `ratelab serve` runs: Boost.Beast over Asio (chosen by measurement against
// cpp-httplib, docs/design.md), keep-alive, a bounded request body (413 past it), a read timeout
// and an idle timeout per connection, and a graceful stop: Stop() closes the listening socket,
// lets every request already read be answered, and closes connections as they go idle.
//
// It only carries requests: each is handed to a handler as an HttpRequest and its answer written
// back. The server runs one thread a handler; connections are handed to the threads in turn,
// and each thread's handler is called on that thread only, with the requests that thread read
// together: answered before it returns (a BatchHandler, or one at a time a Handler), or later,
// while the thread goes on with other requests (an AsyncHandler, which names what its answers
// wait for).
#ifndef RATELAB_IMPL_SERVICE_HTTP_SERVER_H_
#define RATELAB_IMPL_SERVICE_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
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
};

// "HOST:PORT" (an IPv4 address, or [IPv6]:PORT; port 0 for any free one) into `options`;
// InvalidArgument saying what is wrong.
Status ParseListenAddress(std::string_view text, HttpServerOptions& options);

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  // Answers the requests a thread read together (every connection whose request was in when the
  // thread looked), answers[i] to requests[i]: a handler that keeps several decisions in flight
  // at once (RedisPipeline) answers them in one go.
  using BatchHandler = std::function<void(std::span<const HttpRequest* const> requests,
                                          std::span<HttpResponse> answers)>;

  // A connection whose request is read, waiting for its answer.
  class Connection;
  // The way to answer one request, now or later, on its thread.
  class Reply {
   public:
    explicit Reply(std::shared_ptr<Connection> to) : to_(std::move(to)) {}
    const HttpRequest& request() const;
    // Writes the answer out (once), and reads the next request unless the connection closes.
    void Send(HttpResponse answer) &&;

   private:
    std::shared_ptr<Connection> to_;
  };
  // A thread's handler that may answer after it returns: one that keeps decisions in flight on
  // a store while the thread reads and answers other requests (RedisPipeline). It is given the
  // requests a thread read together and answers each through its Reply, then or from Resume.
  class AsyncHandler {
   public:
    virtual ~AsyncHandler() = default;
    // What answers wait for: a descriptor to become readable (-1: nothing waits), and how long
    // the thread waits for it.
    struct Wait {
      int fd = -1;
      Duration limit{};
    };
    // Takes the requests read together (it may move their Replies out and keep them).
    virtual void Take(std::span<Reply> replies) = 0;
    virtual Wait Waiting() const = 0;
    // Once Waiting's descriptor is readable (`readable`), or its limit has passed (not).
    virtual void Resume(bool readable) = 0;
  };
  // `handler` called for each request in turn; an exception it throws is a 500.
  static BatchHandler OneByOne(Handler handler);
  // `handler` as an AsyncHandler that answers every request before Take returns; an exception
  // it throws is a 500 for each.
  static std::unique_ptr<AsyncHandler> AtOnce(BatchHandler handler);

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
      const HttpServerOptions& options, std::vector<std::unique_ptr<AsyncHandler>> handlers);
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

  // The server's state, defined where it is implemented.
  struct State;

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HTTP_SERVER_H_
