// HTTP/1.1 on the wire, for the server (http_server.cc) and ServeBytes: a request read straight
// into an HttpRequest, and an answer written as bytes. Internal to impl/service.
#ifndef RATELAB_IMPL_SERVICE_HTTP_WIRE_H_
#define RATELAB_IMPL_SERVICE_HTTP_WIRE_H_

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <algorithm>
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

// Whether `text` can be sent as a header's value: nothing that ends a line. (A name is a token
// by its type, HeaderName.)
bool FieldText(std::string_view text);

// The answer to a request whose handler threw.
HttpResponse InternalError();

// What a connection may hold of a request it has not finished sending, at most: the request
// line and headers (431 past them), then a chunk's size line with its extensions, or the
// trailers (400 past them). The body is taken as it comes (and held to max_body_bytes), so this
// and the body bound every byte a connection holds.
inline size_t ReadBufferBytes(const HttpServerOptions& options) {
  return std::max<size_t>(options.max_header_bytes, 64);
}

class RequestReader;

// The answer to a request that could not be read, when that was the client's fault (none:
// the connection is closed without one): `reader`'s refusal when it refused the request, else
// what Beast's error `ec` says.
std::optional<HttpResponse> UnreadableAnswer(beast::error_code ec, const RequestReader& reader,
                                             const HttpServerOptions& options);

// Appends the bytes of `answer` to a request of HTTP/1.`version % 10` (10 or 11) to `out`, as
// one buffer (Beast's serializer walks a chain of buffers per field, which costs more than the
// decision). A header whose name or value could end the line early is dropped rather than sent.
// The answer to HEAD (`head`) has the length it would have, and no body: a body there would be
// read as the start of the next answer. `answer` is left as it was, with its room (a server
// thread that keeps it answers the next request in that room: HttpServer::BatchHandler).
void WriteAnswer(const HttpResponse& answer, unsigned version, bool keep_alive, bool head,
                 std::string& out);

// Beast's parser writing a request straight into an HttpRequest, whose strings keep their
// capacity from one request of a connection to the next: no message of Beast's to copy from,
// and no allocation per header. It holds a request to `options`' limits of header and body, and
// refuses, as RFC 9112 says and nginx does, what a proxy in front could read as another request:
// a transfer coding other than chunked (501) or chunked twice or not last (400), Transfer-Encoding
// sent twice (400), a header folded across lines (obs-fold, 400), and, in HTTP/1.1, a request
// without exactly one Host (400). Trailers are read and dropped: a field the client puts after
// the body never reads as a header. Beast's own refusals (a Content-Length beside chunked, two
// different lengths) stand too.
class RequestReader final : public http::basic_parser<true> {
 public:
  RequestReader(HttpRequest& request, const HttpServerOptions& options) : request_(request) {
    body_limit(options.max_body_bytes);
    header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  }

  unsigned version() const { return version_; }  // 10 or 11, once the request line is read
  // Why the request was refused, when the parse stopped on a rule of the reader's own.
  const std::optional<HttpResponse>& refusal() const { return refusal_; }

 private:
  void on_request_impl(http::verb, beast::string_view method, beast::string_view target,
                       int version, beast::error_code&) override {
    version_ = static_cast<unsigned>(version);
    request_.method.assign(method.data(), method.size());
    // The path, then the query; a fragment (which no browser sends) is neither.
    std::string_view t(target.data(), target.size());
    t = t.substr(0, t.find('#'));
    const size_t question = t.find('?');
    request_.path.assign(t.substr(0, question));
    request_.query.assign(question == std::string_view::npos ? std::string_view()
                                                             : t.substr(question + 1));
    headers_ = 0;
    hosts_ = 0;
    transfer_encodings_ = 0;
  }
  void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
  void on_field_impl(http::field field, beast::string_view name, beast::string_view value,
                     beast::error_code& ec) override {
    if (is_header_done()) return;  // a trailer
    if (Folded(name)) return Refuse(400, "a header is folded onto a second line (obs-fold)", ec);
    if (field == http::field::host && ++hosts_ > 1) return Refuse(400, "Host is sent twice", ec);
    if (field == http::field::transfer_encoding) {
      if (++transfer_encodings_ > 1) return Refuse(400, "Transfer-Encoding is sent twice", ec);
      if (const int status = TransferCodingRefusal(std::string_view(value.data(), value.size()))) {
        return Refuse(status,
                      status == 501 ? "the only transfer coding served is chunked"
                                    : "chunked is the last transfer coding, and only once",
                      ec);
      }
    }
    if (headers_ == request_.headers.size()) request_.headers.emplace_back();
    HttpHeader& h = request_.headers[headers_++];
    h.name.assign(name.data(), name.size());
    h.value.assign(value.data(), value.size());
  }
  void on_header_impl(beast::error_code& ec) override {
    request_.headers.resize(headers_);
    if (version_ == 11 && hosts_ == 0) Refuse(400, "an HTTP/1.1 request has no Host", ec);
  }
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
  void Refuse(int status, std::string_view why, beast::error_code& ec);
  // Whether the field whose name Beast hands over (a view of the bytes read, which hold the
  // field's whole line and the byte after its end) went on past its line's end: Beast joins
  // such a value into one.
  static bool Folded(beast::string_view name);
  // 0 when `value` is exactly the chunked coding; else 501 for a coding not served, 400 for
  // chunked twice.
  static int TransferCodingRefusal(std::string_view value);

  HttpRequest& request_;
  unsigned version_ = 11;
  size_t headers_ = 0;  // read so far
  int hosts_ = 0;
  int transfer_encodings_ = 0;
  std::optional<HttpResponse> refusal_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_HTTP_WIRE_H_
