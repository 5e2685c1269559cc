#include "impl/service/http_server.h"

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <set>

namespace ratelab {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class Session;

std::chrono::steady_clock::duration Steady(Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
}

}  // namespace

struct HttpServer::State {
  explicit State(HttpServerOptions o, Handler h) : options(std::move(o)), handler(std::move(h)) {}

  HttpServerOptions options;
  Handler handler;
  // Declared before the io_context, so destroyed after it: the handlers it destroys may hold
  // the last reference to a session, which takes itself out of this set.
  std::set<Session*> sessions;  // open connections, on the server's thread only
  bool stopping = false;        // on the server's thread only
  std::atomic<int64_t> answered{0};
  uint16_t port = 0;  // bound, set before the server's thread starts
  net::io_context ioc{1};
  tcp::acceptor acceptor{ioc};

  void Accept();
  void StopOnThread();
};

namespace {

// One connection: read a request, answer it, and again while it is kept alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::State& state)
      : stream_(std::move(socket)), state_(state) {
    state_.sessions.insert(this);
  }
  ~Session() { state_.sessions.erase(this); }

  void ReadHeader() {
    if (state_.stopping) return Close();
    parser_.emplace();
    parser_->body_limit(state_.options.max_body_bytes);
    idle_ = true;
    stream_.expires_after(Steady(state_.options.idle_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, size_t) {
                              self->idle_ = false;
                              if (ec) return self->Failed(ec);
                              self->ReadBody();
                            });
  }

  // A connection waiting for its next request is closed by a stop; one in the middle of a
  // request is answered first.
  void CloseIfIdle() {
    if (idle_) stream_.socket().close();
  }

 private:
  void ReadBody() {
    stream_.expires_after(Steady(state_.options.read_timeout));
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->Failed(ec);
                       self->Answer();
                     });
  }

  // A request that could not be read: answered when it was the client's fault, then closed.
  void Failed(beast::error_code ec) {
    if (ec == http::error::body_limit) {
      return Write(HttpResponse{413,
                                {{"Content-Type", "application/json"}},
                                R"({"error":"the body is larger than )" +
                                    std::to_string(state_.options.max_body_bytes) + R"( bytes"})"},
                   false);
    }
    if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return Write(HttpResponse{400,
                                {{"Content-Type", "application/json"}},
                                R"({"error":"the request is not HTTP/1.1"})"},
                   false);
    }
    Close();
  }

  void Answer() {
    const http::request<http::string_body>& in = parser_->get();
    HttpRequest request;
    request.method = std::string(in.method_string());
    const std::string_view target(in.target().data(), in.target().size());
    const size_t question = target.find('?');
    request.path = std::string(target.substr(0, question));
    if (question != std::string_view::npos)
      request.query = std::string(target.substr(question + 1));
    for (const auto& field : in) {
      request.headers.push_back({std::string(field.name_string()), std::string(field.value())});
    }
    request.body = in.body();
    HttpResponse answer;
    try {
      answer = state_.handler(request);
    } catch (const std::exception&) {
      answer = {500, {{"Content-Type", "application/json"}}, R"({"error":"internal error"})"};
    }
    Write(std::move(answer), in.keep_alive());
  }

  void Write(HttpResponse answer, bool keep_alive) {
    auto out = std::make_shared<http::response<http::string_body>>();
    out->version(11);
    out->result(static_cast<unsigned>(answer.status));
    for (HttpHeader& h : answer.headers) out->set(h.name, h.value);
    out->body() = std::move(answer.body);
    out->keep_alive(keep_alive && !state_.stopping);
    out->prepare_payload();
    stream_.expires_after(Steady(state_.options.read_timeout));
    http::async_write(stream_, *out,
                      [self = shared_from_this(), out](beast::error_code ec, size_t) {
                        self->state_.answered.fetch_add(1, std::memory_order_relaxed);
                        if (ec || !out->keep_alive()) return self->Close();
                        self->ReadHeader();
                      });
  }

  void Close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  HttpServer::State& state_;
  bool idle_ = false;
};

}  // namespace

void HttpServer::State::Accept() {
  acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec) return;  // the acceptor was closed: a stop
    socket.set_option(tcp::no_delay(true), ec);
    std::make_shared<Session>(std::move(socket), *this)->ReadHeader();
    Accept();
  });
}

void HttpServer::State::StopOnThread() {
  if (stopping) return;
  stopping = true;
  beast::error_code ignored;
  acceptor.close(ignored);
  for (Session* s : std::set<Session*>(sessions)) s->CloseIfIdle();
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
  auto state = std::make_unique<State>(options, std::move(handler));
  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) {
    return absl::InvalidArgumentError("'" + options.host + "' is not an IP address to listen on");
  }
  const tcp::endpoint endpoint(address, options.port);
  const std::string where = options.host + ":" + std::to_string(options.port);
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(endpoint, ec);
  if (!ec) state->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) return absl::UnavailableError("cannot listen on " + where + ": " + ec.message());
  state->port = state->acceptor.local_endpoint(ec).port();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() = default;

uint16_t HttpServer::port() const { return state_->port; }

void HttpServer::Run() {
  state_->Accept();
  state_->ioc.run();
}

void HttpServer::Stop() {
  net::post(state_->ioc, [state = state_.get()] { state->StopOnThread(); });
}

int64_t HttpServer::answered() const { return state_->answered.load(std::memory_order_relaxed); }

}  // namespace ratelab
