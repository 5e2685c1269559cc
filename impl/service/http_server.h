// The HTTP/1.1 server `ratelab serve` runs: Boost.Beast over Asio (chosen by measurement against
// cpp-httplib, docs/design.md), keep-alive, a bounded request body (413 past it), a read timeout
// and an idle timeout per connection, and a graceful stop: Stop() closes the listening socket,
// lets every request already read be answered, and closes connections as they go idle.
//
// It only carries requests: each is handed to a handler as an HttpRequest and its answer written
// back. The server runs one thread a handler; connections are handed to the threads in turn,
// and each thread's handler is called on that thread only, with the requests that thread read
// together (a BatchHandler), or one at a time (a Handler).
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
  // `handler` called for each request in turn; an exception it throws is a 500.
  static BatchHandler OneByOne(Handler handler);

  // Listens on options.host:options.port. InvalidArgument for a host that is not an address,
  // Unavailable when the port cannot be had (in use, or not allowed).
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    Handler handler);
  // The same with a thread for each of `handlers` (at least one).
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    std::vector<Handler> handlers);
  static Result<std::unique_ptr<HttpServer>> Listen(const HttpServerOptions& options,
                                                    std::vector<BatchHandler> handlers);
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
