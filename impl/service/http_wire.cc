#include "impl/service/http_wire.h"

#include <vector>

namespace ratelab {

bool FieldText(std::string_view text, bool name) {
  bool bad = false;  // without a branch a character: headers are short, and there are several
  for (const char c : text) bad |= (c == '\r') | (c == '\n') | (name & (c == ':'));
  return !bad;
}

HttpResponse InternalError() {
  return {500, {{"Content-Type", "application/json"}}, R"({"error":"internal error"})"};
}

std::optional<HttpResponse> UnreadableAnswer(beast::error_code ec,
                                             const HttpServerOptions& options) {
  if (ec == http::error::header_limit) {
    return HttpResponse{431,
                        {{"Content-Type", "application/json"}},
                        R"({"error":"the request line and headers are larger than )" +
                            std::to_string(options.max_header_bytes) + R"( bytes"})"};
  }
  if (ec == http::error::body_limit) {
    return HttpResponse{413,
                        {{"Content-Type", "application/json"}},
                        R"({"error":"the body is larger than )" +
                            std::to_string(options.max_body_bytes) + R"( bytes"})"};
  }
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    return HttpResponse{
        400, {{"Content-Type", "application/json"}}, R"({"error":"the request is not HTTP/1.1"})"};
  }
  return std::nullopt;
}

void WriteAnswer(HttpResponse answer, unsigned version, bool keep_alive, bool head,
                 std::string& out) {
  const unsigned status = static_cast<unsigned>(answer.status);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  const beast::string_view reason = http::obsolete_reason(static_cast<http::status>(status));
  out.append(reason.data(), reason.size());
  out += "\r\n";
  for (const HttpHeader& h : answer.headers) {
    if (!FieldText(h.name, true) || !FieldText(h.value, false)) continue;
    out += h.name;
    out += ": ";
    out += h.value;
    out += "\r\n";
  }
  // No length (and no body) for an answer that may have none: 1xx, 204, 304 (RFC 9110).
  if (status >= 200 && status != 204 && status != 304) {
    out += "Content-Length: ";
    out += std::to_string(answer.body.size());
    out += "\r\n";
  } else {
    answer.body.clear();
  }
  if (head) answer.body.clear();
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (version == 10) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  out += answer.body;
}

std::vector<ServedExchange> ServeBytes(std::string_view bytes, const HttpServerOptions& options,
                                       const HttpServer::Handler& handler) {
  const HttpServer::BatchHandler answer_one = HttpServer::OneByOne(handler);
  std::vector<ServedExchange> exchanges;
  HttpRequest request;
  while (!bytes.empty()) {
    RequestReader parser(request, options);
    parser.eager(true);
    beast::error_code ec;
    while (!parser.is_done() && !ec) {
      const size_t used = parser.put(net::buffer(bytes.data(), bytes.size()), ec);
      bytes.remove_prefix(used);
      // What is left is cut short: a connection would wait for more (the parser must be given
      // more than it was before, never the same bytes again).
      if (ec == http::error::need_more) return exchanges;
      if (!ec && used == 0 && !parser.is_done()) return exchanges;
    }
    ServedExchange exchange;
    if (ec) {
      std::optional<HttpResponse> answer = UnreadableAnswer(ec, options);
      if (!answer) return exchanges;  // closed without an answer
      exchange.method = parser.is_header_done() ? request.method : "";
      WriteAnswer(*std::move(answer), parser.version(), false, exchange.method == "HEAD",
                  exchange.bytes);
      exchanges.push_back(std::move(exchange));
      return exchanges;
    }
    const HttpRequest* const requests[] = {&request};
    HttpResponse answer;
    answer_one(requests, std::span<HttpResponse>(&answer, 1));
    exchange.method = request.method;
    const bool keep_alive = parser.keep_alive();
    WriteAnswer(std::move(answer), parser.version(), keep_alive, request.method == "HEAD",
                exchange.bytes);
    exchanges.push_back(std::move(exchange));
    if (!keep_alive) break;
  }
  return exchanges;
}

}  // namespace ratelab
