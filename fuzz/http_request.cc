// Whole requests, as a connection sends them: the input is the bytes of one connection (request
// lines, paths, queries, headers, bodies, several requests kept alive), read by the server's own
// parser and limits (ServeBytes, impl/service/http_server.h), routed and answered by the
// rate-limit service (the decision, hit, usage, gateway, health, metrics and admin endpoints)
// and written by the server's own answer writer. Every answer must be well-formed HTTP/1.1 (one
// whole response, its length right, no body to HEAD) and never a 500: nothing a client sends may
// make a handler throw, let alone end the process.
#include <cstddef>
#include <cstdint>
#include <string>

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <boost/beast/http.hpp>

#include "fuzz/service.h"
#include "impl/service/http_server.h"

namespace {

namespace http = boost::beast::http;

// Whether `bytes` are exactly one whole response (to a HEAD request: without its body).
bool OneWholeResponse(const std::string& bytes, bool head) {
  http::response_parser<http::string_body> parser;
  parser.eager(true);
  parser.skip(head);
  boost::beast::error_code ec;
  const size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec || !parser.is_done() || used != bytes.size()) return false;
  const unsigned status = parser.get().result_int();
  return status >= 100 && status <= 599;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  ratelab::fuzz::FuzzedService service;
  ratelab::HttpServerOptions options;
  options.max_body_bytes = 1024;
  options.max_header_bytes = 1024;
  const std::vector<ratelab::ServedExchange> served = ratelab::ServeBytes(
      bytes, options, [&](const ratelab::HttpRequest& request) { return service.Answer(request); });
  for (const ratelab::ServedExchange& e : served) {
    if (!OneWholeResponse(e.bytes, e.method == "HEAD")) __builtin_trap();
    if (e.bytes.starts_with("HTTP/1.1 500") || e.bytes.starts_with("HTTP/1.0 500")) {
      __builtin_trap();
    }
  }
  return 0;
}
