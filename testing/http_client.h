// A blocking HTTP/1.1 client on one connection (Boost.Beast), for tests of the service over
// real loopback.
#ifndef RATELAB_TESTING_HTTP_CLIENT_H_
#define RATELAB_TESTING_HTTP_CLIENT_H_

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <string>

namespace ratelab::testing_http {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

using Response = http::response<http::string_body>;

struct Client {
  net::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;

  explicit Client(uint16_t port, const std::string& host = "127.0.0.1") {
    stream.connect(net::ip::tcp::endpoint(net::ip::make_address(host), port));
  }
  // Sends a request with a JSON body and reads the answer.
  Response Send(http::verb verb, const std::string& target, const std::string& body = "") {
    http::request<http::string_body> request(verb, target, 11);
    request.set(http::field::host, "127.0.0.1");
    request.set(http::field::content_type, "application/json");
    request.body() = body;
    request.prepare_payload();
    http::write(stream, request);
    Response response;
    http::read(stream, buffer, response);
    return response;
  }
  // Writes `raw` as it is and reads the answer.
  Response SendRaw(const std::string& raw) {
    net::write(stream.socket(), net::buffer(raw));
    Response response;
    http::read(stream, buffer, response);
    return response;
  }
};

}  // namespace ratelab::testing_http

#endif  // RATELAB_TESTING_HTTP_CLIENT_H_
