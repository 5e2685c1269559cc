#include "impl/service/http_wire.h"

#include <cstring>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace ratelab {

bool FieldText(std::string_view text) {
  // Every answer's every header goes through here (it was 7% of serve's instructions a byte at a
  // time): sixteen bytes at a time where the machine has SSE2, the last few copied into sixteen
  // zeros (a zero is neither), else a byte at a time.
#ifdef __SSE2__
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i lf = _mm_set1_epi8('\n');
  const auto found = [&](const char* at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf));
    return _mm_movemask_epi8(hit) != 0;
  };
  size_t i = 0;
  for (; i + 16 <= text.size(); i += 16) {
    if (found(text.data() + i)) return false;
  }
  if (i == text.size()) return true;
  char last[16] = {};
  std::memcpy(last, text.data() + i, text.size() - i);
  return !found(last);
#else
  bool bad = false;  // without a branch a character
  for (const char c : text) bad |= (c == '\r') | (c == '\n');
  return !bad;
#endif
}

HttpResponse InternalError() {
  return {500, {{"Content-Type", "application/json"}}, R"({"error":"internal error"})"};
}

namespace {

HttpResponse JsonError(int status, std::string_view why) {
  return HttpResponse{
      status, {{"Content-Type", "application/json"}}, R"({"error":")" + std::string(why) + R"("})"};
}

}  // namespace

void RequestReader::Refuse(int status, std::string_view why, beast::error_code& ec) {
  refusal_ = JsonError(status, why);
  ec = http::error::bad_value;  // any error stops the parse; the refusal says which
}

bool RequestReader::Folded(beast::string_view name) {
  const char* p = name.data() + name.size();
  while (*p != '\r') ++p;  // the line's end: a value holds no CR of its own
  return p[2] == ' ' || p[2] == '\t';
}

int RequestReader::TransferCodingRefusal(std::string_view value) {
  int chunked = 0;
  while (true) {
    const size_t comma = value.find(',');
    std::string_view coding = value.substr(0, comma);
    while (!coding.empty() && (coding.front() == ' ' || coding.front() == '\t')) {
      coding.remove_prefix(1);
    }
    while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t')) {
      coding.remove_suffix(1);
    }
    if (!beast::iequals(beast::string_view(coding.data(), coding.size()), "chunked")) return 501;
    ++chunked;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return chunked == 1 ? 0 : 400;
}

std::optional<HttpResponse> UnreadableAnswer(beast::error_code ec, const RequestReader& reader,
                                             const HttpServerOptions& options) {
  if (reader.refusal()) return *reader.refusal();
  if (ec == http::error::header_limit) {
    return JsonError(431, "the request line and headers are larger than " +
                              std::to_string(options.max_header_bytes) + " bytes");
  }
  if (ec == http::error::body_limit) {
    return JsonError(
        413, "the body is larger than " + std::to_string(options.max_body_bytes) + " bytes");
  }
  if (ec == http::error::buffer_overflow) {
    return JsonError(400, "a chunk's size line and extensions, or the trailers, are longer than " +
                              std::to_string(ReadBufferBytes(options)) + " bytes");
  }
  if (ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message &&
      ec != http::error::need_more) {
    return JsonError(400, "the request is not HTTP/1.1");
  }
  return std::nullopt;
}

void WriteAnswer(const HttpResponse& answer, unsigned version, bool keep_alive, bool head,
                 std::string& out) {
  const unsigned status = static_cast<unsigned>(answer.status);
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  const beast::string_view reason = http::obsolete_reason(static_cast<http::status>(status));
  out.append(reason.data(), reason.size());
  out += "\r\n";
  for (const AnswerHeader& h : answer.headers) {
    if (!FieldText(h.value)) continue;
    out += h.name.view();
    out += ": ";
    out += h.value;
    out += "\r\n";
  }
  // No length (and no body) for an answer that may have none: 1xx, 204, 304 (RFC 9110).
  const bool may_have_body = status >= 200 && status != 204 && status != 304;
  if (may_have_body) {
    out += "Content-Length: ";
    out += std::to_string(answer.body.size());
    out += "\r\n";
  }
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (version == 10) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (may_have_body && !head) out += answer.body;
}

std::vector<ServedExchange> ServeBytes(std::string_view bytes, const HttpServerOptions& options,
                                       const HttpServer::Handler& handler) {
  const HttpServer::BatchHandler answer_one = HttpServer::OneByOne(handler);
  std::vector<ServedExchange> exchanges;
  HttpRequest request;
  // The server's read buffer holds at most this much that the parser has not taken.
  const size_t buffer = ReadBufferBytes(options);
  while (!bytes.empty()) {
    RequestReader parser(request, options);
    parser.eager(true);
    beast::error_code ec;
    while (!parser.is_done() && !ec) {
      const std::string_view held = bytes.substr(0, buffer);
      const bool all = held.size() == bytes.size();
      const size_t used = parser.put(net::buffer(held.data(), held.size()), ec);
      bytes.remove_prefix(used);
      if (ec == http::error::need_more) {
        // What is left is cut short: a connection would wait for more.
        if (all) return exchanges;
        // A full buffer the parser can take nothing from is refused; else it is read on into.
        if (used == 0) {
          ec = http::error::buffer_overflow;
          break;
        }
        ec = {};
        continue;
      }
      // (The parser must be given more than it was before, never the same bytes again.)
      if (!ec && used == 0 && !parser.is_done()) return exchanges;
    }
    ServedExchange exchange;
    if (ec) {
      std::optional<HttpResponse> answer = UnreadableAnswer(ec, parser, options);
      if (!answer) return exchanges;  // closed without an answer
      exchange.method = parser.is_header_done() ? request.method : "";
      WriteAnswer(*answer, parser.version(), false, exchange.method == "HEAD", exchange.bytes);
      exchanges.push_back(std::move(exchange));
      return exchanges;
    }
    const HttpRequest* const requests[] = {&request};
    HttpResponse answer;
    answer_one(requests, std::span<HttpResponse>(&answer, 1));
    exchange.method = request.method;
    const bool keep_alive = parser.keep_alive();
    WriteAnswer(answer, parser.version(), keep_alive, request.method == "HEAD", exchange.bytes);
    exchanges.push_back(std::move(exchange));
    if (!keep_alive) break;
  }
  return exchanges;
}

}  // namespace ratelab
