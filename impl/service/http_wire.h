// HTTP/1.1 on the wire, for the server (http_server.cc) and ServeBytes: a request read straight
// into an HttpRequest, and an answer written as bytes. Internal to impl/service.
#ifndef RATELAB_IMPL_SERVICE_HTTP_WIRE_H_
#define RATELAB_IMPL_SERVICE_HTTP_WIRE_H_

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "impl/service/http.h"
#include "impl/service/http_server.h"

namespace ratelab {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

// Whether `text` can be sent as a header's name (no ':') or value: nothing that ends a line.
bool FieldText(std::string_view text, bool name);

// The answer to a request whose handler threw.
HttpResponse InternalError();

// The answer to a request that could not be read, when that was the client's fault (none:
// the connection is closed without one).
std::optional<HttpResponse> UnreadableAnswer(beast::error_code ec,
                                             const HttpServerOptions& options);

// Appends the bytes of `answer` to a request of HTTP/1.`version % 10` (10 or 11) to `out`, as
// one buffer (Beast's serializer walks a chain of buffers per field, which costs more than the
// decision). A header whose name or value could end the line early is dropped rather than sent.
// The answer to HEAD (`head`) has the length it would have, and no body: a body there would be
// read as the start of the next answer.
void WriteAnswer(HttpResponse answer, unsigned version, bool keep_alive, bool head,
                 std::string& out);

// Beast's parser writing a request straight into an HttpRequest, whose strings keep their
// capacity from one request of a connection to the next: no message of Beast's to copy from,
// and no allocation per header. It holds a request to `options`' limits of header and body.
class RequestReader final : public http::basic_parser<true> {
 public:
  RequestReader(HttpRequest& request, const HttpServerOptions& options) : request_(request) {
    body_limit(options.max_body_bytes);
    header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  }

  unsigned version() const { return version_; }  // 10 or 11, once the request line is read

 private:
  void on_request_impl(http::verb, beast::string_view method, beast::string_view target,
                       int version, beast::error_code&) override {
    version_ = static_cast<unsigned>(version);
    request_.method.assign(method.data(), method.size());
    const std::string_view t(target.data(), target.size());
    const size_t question = t.find('?');
    request_.path.assign(t.substr(0, question));
    request_.query.assign(question == std::string_view::npos ? std::string_view()
                                                             : t.substr(question + 1));
    headers_ = 0;
  }
  void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
  void on_field_impl(http::field, beast::string_view name, beast::string_view value,
                     beast::error_code&) override {
    if (headers_ == request_.headers.size()) request_.headers.emplace_back();
    HttpHeader& h = request_.headers[headers_++];
    h.name.assign(name.data(), name.size());
    h.value.assign(value.data(), value.size());
  }
  void on_header_impl(beast::error_code&) override { request_.headers.resize(headers_); }
  void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                         beast::error_code&) override {
    request_.body.clear();
    // (The parser holds the length to body_limit before this.)
    request_.body.reserve(length.value_or(0) + kHttpBodyPadding);
  }
  std::size_t on_body_impl(beast::string_view body, beast::error_code&) override {
    return Append(body);
  }
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body,
                                 beast::error_code&) override {
    return Append(body);
  }
  void on_finish_impl(beast::error_code&) override {
    if (request_.body.capacity() - request_.body.size() < kHttpBodyPadding) {
      request_.body.reserve(request_.body.size() + kHttpBodyPadding);
    }
  }

  std::size_t Append(beast::string_view body) {
    request_.body.append(body.data(), body.size());
    return body.size();
  }

  HttpRequest& request_;
  unsigned version_ = 11;
  size_t headers_ = 0;  // read so far
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HTTP_WIRE_H_
