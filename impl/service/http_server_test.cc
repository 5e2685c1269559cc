// The service over real HTTP on loopback: HttpServer carrying RateLimitService, a client of
// Boost.Beast on the other end.
#include "impl/service/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "absl/strings/str_cat.h"
#include "impl/core/clock.h"
#include "impl/service/http_wire.h"
#include "impl/service/service.h"
#include "testing/http_client.h"

namespace ratelab {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using testing_http::Client;

// `ratelab serve` in small: the seeds' rules, in process, on a clock that stays in the middle of
// a minute (the system clock could cross a window's edge between two requests).
struct Served {
  RuleSet rules = SeedServiceRules();
  RulesLimiter limiter{[this]() -> const RuleSet& { return rules; }, InProcessProtocols()};
  RateLimitService service{limiter};
  ManualClock clock{FromUnixNanos(int64_t{1'767'225'630} * 1'000'000'000)};
  InlineExecutor executor;
  std::unique_ptr<HttpServer> server;
  std::thread thread;

  explicit Served(HttpServerOptions options = {}) {
    options.port = 0;
    Result<std::unique_ptr<HttpServer>> listening =
        HttpServer::Listen(options, [this](const HttpRequest& request) {
          Context ctx(executor);
          return RunInline(service.Handle(ctx, request, clock.Now()));
        });
    EXPECT_TRUE(listening.ok()) << listening.status();
    server = *std::move(listening);
    thread = std::thread([this] { server->Run(); });
  }
  ~Served() {
    server->Stop();
    thread.join();
  }
};

HttpServerOptions AnyPort() {
  HttpServerOptions options;
  options.port = 0;
  return options;
}

TEST(HttpServer, TenParallelHitsFiveOkFiveRejectedAsTheHitCountersTestSays) {
  Served s;
  const uint16_t port = s.server->port();
  std::vector<int> statuses(10);
  std::vector<std::thread> clients;
  for (size_t i = 0; i < statuses.size(); ++i) {
    clients.emplace_back([&, i] {
      Client c(port);
      statuses[i] = c.Send(http::verb::post, "/api/hit", R"({"userId": "user_1"})").result_int();
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200), 5);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 429), 5);
}

TEST(HttpServer, AKeptAliveConnectionCarriesRequestsAndTheHeadersComeThrough) {
  Served s;
  Client c(s.server->port());
  for (int i = 1; i <= 5; ++i) {
    const auto r = c.Send(http::verb::post, "/api/hit", R"({"userId": "u"})");
    EXPECT_EQ(r.result_int(), 200);
    EXPECT_EQ(r["X-RateLimit-Remaining"], std::to_string(5 - i));
    EXPECT_TRUE(r.keep_alive());
  }
  const auto sixth = c.Send(http::verb::post, "/api/hit", R"({"userId": "u"})");
  EXPECT_EQ(sixth.result_int(), 429);
  EXPECT_EQ(sixth.body(), R"({"error":"Rate limit exceeded","limit":5})");
  EXPECT_FALSE(sixth["Retry-After"].empty());
  // The limit service's "2 requests, 1 token": the decision API over the default token bucket.
  const auto check = c.Send(http::verb::post, "/ratelimit/check?x=1",
                            R"({"user_id": "u_42", "endpoint": "/api/messages"})");
  EXPECT_EQ(check.result_int(), 200) << "the query is not part of the path";
  EXPECT_EQ(check["RateLimit-Policy"],
            "\"" + DerivedRuleId(ScopeType::kUser, "*", "*") + "\";q=100;w=60");
  EXPECT_EQ(c.Send(http::verb::get, "/healthz", "").body(), R"({"status":"ok"})");
}

TEST(HttpServer, OversizedAndMalformedRequestsAreAnsweredAndTheServerGoesOn) {
  HttpServerOptions options;
  options.max_body_bytes = 100;
  Served s(options);
  {
    Client c(s.server->port());
    const auto big = c.Send(http::verb::post, "/api/hit", std::string(1000, 'x'));
    EXPECT_EQ(big.result_int(), 413);
    EXPECT_EQ(big.body(), R"({"error":"the body is larger than 100 bytes"})");
  }
  {
    Client c(s.server->port());
    const auto garbage = c.SendRaw("HELLO\x01 there\r\n\r\n");
    EXPECT_EQ(garbage.result_int(), 400);
    EXPECT_EQ(garbage.body(), R"({"error":"the request is not HTTP/1.1"})");
  }
  {
    // Chunked, in two chunks, and past the limit once the chunks are added up.
    Client c(s.server->port());
    const auto chunked = c.SendRaw(
        "POST /api/hit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "a\r\n{\"userId\":\r\n6\r\n \"ch\"}\r\n0\r\n\r\n");
    EXPECT_EQ(chunked.result_int(), 200) << chunked.body();
    EXPECT_TRUE(chunked.body().starts_with(R"({"userId":"ch",)")) << chunked.body();
    const auto big = c.SendRaw(
        "POST /api/hit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "64\r\n" +
        std::string(100, ' ') + "\r\n1\r\n{\r\n0\r\n\r\n");
    EXPECT_EQ(big.result_int(), 413);
  }
  Client c(s.server->port());
  EXPECT_EQ(c.Send(http::verb::post, "/api/hit", "{").result_int(), 400);
  EXPECT_EQ(c.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

TEST(HttpServer, AStopAnswersWhatWasReadAndClosesIdleConnections) {
  auto s = std::make_unique<Served>();
  Client idle(s->server->port());
  EXPECT_EQ(idle.Send(http::verb::get, "/healthz", "").result_int(), 200);
  s.reset();  // Stop, and Run returns although a kept-alive connection is open
  beast::error_code ec;
  http::response<http::string_body> none;
  http::write(idle.stream, http::request<http::string_body>(http::verb::get, "/healthz", 11), ec);
  if (!ec) http::read(idle.stream, idle.buffer, none, ec);
  EXPECT_TRUE(ec) << "the idle connection was closed";
}

// When the server closes `c`'s connection (reading nothing from it), waiting at most `limit`.
std::chrono::steady_clock::time_point WhenClosed(Client& c, std::chrono::seconds limit) {
  c.stream.expires_after(limit);
  char byte;
  beast::error_code ec;
  c.stream.read_some(net::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  return std::chrono::steady_clock::now();
}

TEST(HttpServer, AConnectionPastItsTimeoutIsClosedAndNotBefore) {
  using std::chrono::milliseconds;
  HttpServerOptions options;
  options.read_timeout = milliseconds(400);
  options.idle_timeout = milliseconds(300);
  Served s(options);
  // Kept alive after an answer, and silent. (Each time is taken before what starts the wait,
  // so the server's own start is later.)
  Client idle(s.server->port());
  const auto idle_since = std::chrono::steady_clock::now();
  EXPECT_EQ(idle.Send(http::verb::get, "/healthz", "").result_int(), 200);
  // Half a request (a slow client), never finished.
  Client slow(s.server->port());
  const auto slow_since = std::chrono::steady_clock::now();
  net::write(slow.stream.socket(), net::buffer(std::string("GET /healthz HTTP/1.1\r\nHo")));
  EXPECT_GE(WhenClosed(idle, std::chrono::seconds(10)) - idle_since, milliseconds(300));
  EXPECT_GE(WhenClosed(slow, std::chrono::seconds(10)) - slow_since, milliseconds(400));
  // The server goes on.
  Client next(s.server->port());
  EXPECT_EQ(next.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

// Everything the server sends on `c`'s connection until it closes it (at most `limit`).
std::string ReadUntilClosed(Client& c, std::chrono::seconds limit) {
  c.stream.expires_after(limit);
  std::string all(static_cast<const char*>(c.buffer.data().data()), c.buffer.size());
  char chunk[4096];
  beast::error_code ec;
  while (!ec) {
    const size_t n = c.stream.read_some(net::buffer(chunk), ec);
    all.append(chunk, n);
  }
  return all;
}

// A body in the answer to HEAD would be read as the start of the next answer.
TEST(HttpServer, TheAnswerToHeadHasALengthAndNoBody) {
  Served s;
  Client c(s.server->port());
  net::write(
      c.stream.socket(),
      net::buffer(std::string("HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                              "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")));
  const std::string both = ReadUntilClosed(c, std::chrono::seconds(10));
  const size_t second = both.find("HTTP/1.1 200 OK");
  ASSERT_NE(second, std::string::npos) << both;
  const std::string head = both.substr(0, second);
  EXPECT_TRUE(head.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << head;
  EXPECT_NE(head.find("Content-Length: "), std::string::npos) << head;
  EXPECT_TRUE(head.ends_with("\r\n\r\n")) << "no body after the header: " << head;
  EXPECT_TRUE(both.ends_with(R"({"status":"ok"})")) << both;
}

TEST(HttpServer, AHeaderPastItsLimitIsA431) {
  HttpServerOptions options;
  options.max_header_bytes = 2048;
  Served s(options);
  Client c(s.server->port());
  const auto big = c.SendRaw(
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4000, 'x') + "\r\n\r\n");
  EXPECT_EQ(big.result_int(), 431);
  EXPECT_EQ(big.body(), R"({"error":"the request line and headers are larger than 2048 bytes"})");
  Client next(s.server->port());
  EXPECT_EQ(next.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

// Past --max-connections, the oldest connection waiting for a request makes room; with none
// waiting, the new one is closed at once. The server goes on accepting either way.
TEST(HttpServer, PastItsBoundTheOldestIdleConnectionMakesRoom) {
  HttpServerOptions options;
  options.max_connections = 3;
  Served s(options);
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<Client>(s.server->port()));
    EXPECT_EQ(idle.back()->Send(http::verb::get, "/healthz", "").result_int(), 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // each idle since later
  }
  Client fourth(s.server->port());
  EXPECT_EQ(fourth.Send(http::verb::get, "/healthz", "").result_int(), 200);
  WhenClosed(*idle[0], std::chrono::seconds(10));  // the oldest idle one was closed
  EXPECT_EQ(idle[1]->Send(http::verb::get, "/healthz", "").result_int(), 200);
  EXPECT_EQ(idle[2]->Send(http::verb::get, "/healthz", "").result_int(), 200);
  EXPECT_EQ(s.server->counts().closed_for_room, 1);
  // Three connections each in the middle of a request: none idle, so a fourth is refused.
  idle.clear();
  std::vector<std::unique_ptr<Client>> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(std::make_unique<Client>(s.server->port()));
    net::write(busy.back()->stream.socket(), net::buffer(std::string("GET /healthz HTTP/1.1\r\n")));
  }
  fourth.stream.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the closed ones are gone
  Client refused(s.server->port());
  WhenClosed(refused, std::chrono::seconds(10));
  EXPECT_GE(s.server->counts().refused, 1);
  busy.pop_back();  // a slot comes free
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Client after(s.server->port());
  EXPECT_EQ(after.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

// What the fuzzer drives: a connection's bytes through the server's parser, the service and the
// server's answer writer, without the network.
TEST(ServeBytes, AnswersEachRequestAConnectionSendsAsTheServerWould) {
  RuleSet rules = SeedServiceRules();
  RulesLimiter limiter([&]() -> const RuleSet& { return rules; }, InProcessProtocols());
  RateLimitService service(limiter);
  InlineExecutor executor;
  const auto handler = [&](const HttpRequest& request) {
    Context ctx(executor);
    return RunInline(service.Handle(ctx, request, FromUnixNanos(1'767'225'630'000'000'000)));
  };
  const std::vector<ServedExchange> served = ServeBytes(
      "POST /api/hit HTTP/1.1\r\nHost: x\r\nContent-Length: 15\r\n\r\n{\"userId\": \"u\"}"
      "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHo",  // cut short: not answered
      HttpServerOptions{}, handler);
  ASSERT_EQ(served.size(), 3u);
  EXPECT_EQ(served[0].method, "POST");
  EXPECT_TRUE(served[0].bytes.starts_with("HTTP/1.1 200 OK\r\n")) << served[0].bytes;
  EXPECT_EQ(served[1].method, "HEAD");
  EXPECT_TRUE(served[1].bytes.starts_with("HTTP/1.1 405 ")) << served[1].bytes;
  EXPECT_TRUE(served[1].bytes.ends_with("\r\n\r\n")) << "no body: " << served[1].bytes;
  EXPECT_TRUE(served[2].bytes.starts_with("HTTP/1.1 400 ")) << served[2].bytes;
  EXPECT_TRUE(served[2].bytes.ends_with(R"({"error":"the path is not UTF-8"})")) << served[2].bytes;

  // Found by fuzz/http_request.cc: the 400 to a HEAD whose body could not be read had a body.
  const std::vector<ServedExchange> head = ServeBytes(
      "HEAD /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"sco\r\n0\r/x",
      HttpServerOptions{}, handler);
  ASSERT_EQ(head.size(), 1u);
  EXPECT_TRUE(head[0].bytes.starts_with("HTTP/1.1 400 ")) << head[0].bytes;
  EXPECT_TRUE(head[0].bytes.ends_with("\r\n\r\n")) << "no body: " << head[0].bytes;

  const std::vector<ServedExchange> garbage =
      ServeBytes("\x01\x02 nonsense\r\n\r\n", HttpServerOptions{}, handler);
  ASSERT_EQ(garbage.size(), 1u);
  EXPECT_EQ(garbage[0].method, "");
  EXPECT_TRUE(garbage[0].bytes.starts_with("HTTP/1.1 400 ")) << garbage[0].bytes;

  // A handler that throws is a 500, and the connection's next request is still answered.
  const std::vector<ServedExchange> thrown =
      ServeBytes("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
                 HttpServerOptions{}, [](const HttpRequest& request) -> HttpResponse {
                   if (request.path == "/a") throw std::runtime_error("boom");
                   return HttpResponse{200, {}, "ok"};
                 });
  ASSERT_EQ(thrown.size(), 2u);
  EXPECT_TRUE(thrown[0].bytes.starts_with("HTTP/1.1 500 ")) << thrown[0].bytes;
  EXPECT_TRUE(thrown[1].bytes.starts_with("HTTP/1.1 200 ")) << thrown[1].bytes;
}

// What a connection holds is bounded, a chunk's size line, its extensions and the trailers
// included (each once grew the read buffer without end: a chunk extension that never ended took
// serve to 3 GB); what is past the bound is refused with a 400 and the connection closed.
TEST(ServeBytes, AChunkLineOrTrailersPastTheReadBufferAreRefused) {
  HttpServerOptions options;
  options.max_header_bytes = 1024;
  const auto ok = [](const HttpRequest&) { return HttpResponse{200, {}, "ok"}; };
  const std::string head =
      "POST /api/hit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string refused =
      R"({"error":"a chunk's size line and extensions, or the trailers, are longer than 1024 bytes"})";
  for (const std::string& body :
       {"1;" + std::string(5000, 'a'), "1;a=" + std::string(1021, 'b') + "\r\nx\r\n0\r\n\r\n",
        "1\r\nx\r\n0\r\nX-A: " + std::string(5000, 'a'),
        "1\r\nx\r\n0;" + std::string(2000, 'e') + "\r\n\r\n"}) {
    const std::vector<ServedExchange> served = ServeBytes(head + body, options, ok);
    ASSERT_EQ(served.size(), 1u) << body.substr(0, 40);
    EXPECT_TRUE(served[0].bytes.starts_with("HTTP/1.1 400 ")) << served[0].bytes;
    EXPECT_NE(served[0].bytes.find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(served[0].bytes.ends_with(refused)) << served[0].bytes;
  }
  // Within the bound, a chunk's extensions and the trailers are read (and the trailers dropped).
  const std::vector<ServedExchange> fine =
      ServeBytes(head + "1;a=" + std::string(900, 'b') +
                     "\r\nx\r\n0\r\nX-A: " + std::string(900, 'a') + "\r\n\r\n",
                 options, ok);
  ASSERT_EQ(fine.size(), 1u);
  EXPECT_TRUE(fine[0].bytes.starts_with("HTTP/1.1 200 ")) << fine[0].bytes;
}

// A field the client sends after the body is not a header of the request: a trailer
// `X-User-Id` (or a second Host) must not stand in for one the gateway set or checked.
TEST(ServeBytes, TrailersAreReadAndDroppedNotAddedToTheHeaders) {
  std::vector<HttpHeader> seen;
  std::string body;
  const std::vector<ServedExchange> served = ServeBytes(
      "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\nab\r\n0\r\nX-User-Id: someone-else\r\nHost: evil\r\n\r\n",
      HttpServerOptions{}, [&](const HttpRequest& request) {
        seen = request.headers;
        body = request.body;
        return HttpResponse{200, {}, "ok"};
      });
  ASSERT_EQ(served.size(), 1u);
  EXPECT_TRUE(served[0].bytes.starts_with("HTTP/1.1 200 ")) << served[0].bytes;
  EXPECT_EQ(body, "ab");
  EXPECT_EQ(seen, (std::vector<HttpHeader>{{"Host", "x"}, {"Transfer-Encoding", "chunked"}}));
}

// What a proxy in front could read differently from serve is refused and the connection closed
// (RFC 9112; as nginx answers): so no body is ever read as a second request on its connection.
TEST(ServeBytes, TransferCodingsHostAndFoldedHeadersAProxyCouldReadOtherwiseAreRefused) {
  const auto ok = [](const HttpRequest&) { return HttpResponse{200, {}, "ok"}; };
  // The body a proxy that reads chunked would take as this request's, and serve as a second.
  const std::string smuggled = "0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  struct Case {
    std::string headers;
    std::string status;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"Transfer-Encoding: xchunked\r\n", "501", "the only transfer coding served is chunked"},
      {"Transfer-Encoding: chunked, identity\r\n", "501",
       "the only transfer coding served is chunked"},
      {"Transfer-Encoding: gzip, chunked\r\n", "501", "the only transfer coding served is chunked"},
      {"Transfer-Encoding: chunked, chunked\r\n", "400",
       "chunked is the last transfer coding, and only once"},
      {"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", "501",
       "the only transfer coding served is chunked"},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "400",
       "the request is not HTTP/1.1"},  // Beast's own refusal
      {"X-A: 1\r\n  2\r\n", "400", "a header is folded onto a second line (obs-fold)"},
      {"X-A: 1\r\n\t2\r\n", "400", "a header is folded onto a second line (obs-fold)"},
      {"Host: y\r\n", "400", "Host is sent twice"},
  };
  for (const Case& c : cases) {
    const std::vector<ServedExchange> served =
        ServeBytes("POST /api/hit HTTP/1.1\r\nHost: x\r\n" + c.headers + "\r\n" + smuggled,
                   HttpServerOptions{}, ok);
    ASSERT_EQ(served.size(), 1u) << c.headers;
    EXPECT_TRUE(served[0].bytes.starts_with("HTTP/1.1 " + c.status + " ")) << served[0].bytes;
    EXPECT_NE(served[0].bytes.find("Connection: close\r\n"), std::string::npos);
    EXPECT_TRUE(served[0].bytes.ends_with(R"({"error":")" + c.error + R"("})")) << served[0].bytes;
  }
  // Chunked in any case, with white space around it, is read.
  for (const std::string te : {"chunked", "Chunked", " CHUNKED "}) {
    const std::vector<ServedExchange> served =
        ServeBytes("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:" + te + "\r\n\r\n" + smuggled,
                   HttpServerOptions{}, ok);
    ASSERT_EQ(served.size(), 2u) << te;
    EXPECT_TRUE(served[0].bytes.starts_with("HTTP/1.1 200 ")) << served[0].bytes;
  }
  // HTTP/1.1 needs its Host; HTTP/1.0 may go without.
  const std::vector<ServedExchange> no_host =
      ServeBytes("GET /healthz HTTP/1.1\r\n\r\n", HttpServerOptions{}, ok);
  ASSERT_EQ(no_host.size(), 1u);
  EXPECT_TRUE(no_host[0].bytes.ends_with(R"({"error":"an HTTP/1.1 request has no Host"})"))
      << no_host[0].bytes;
  const std::vector<ServedExchange> old =
      ServeBytes("GET /healthz HTTP/1.0\r\n\r\n", HttpServerOptions{}, ok);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_TRUE(old[0].bytes.starts_with("HTTP/1.0 200 ")) << old[0].bytes;
}

// The process's resident memory, in bytes (Linux).
size_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

// The attack as it came: a chunk extension that never ends, 256 MB of it on one connection.
// The server refuses it within its read buffer and closes the connection: its memory does not
// grow with what the client sends, and it closes long before its read timeout.
TEST(HttpServer, AChunkExtensionThatNeverEndsIsCutOffAtTheReadBuffer) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::seconds(30);
  Served s(options);
  const size_t before = ResidentBytes();
  Client c(s.server->port());
  const int fd = c.stream.socket().native_handle();
  std::atomic<size_t> sent = 0;
  std::thread writer([&] {
    const std::string head =
        "POST /api/hit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;";
    if (send(fd, head.data(), head.size(), MSG_NOSIGNAL) < 0) return;
    const std::string run(1 << 20, 'a');
    while (sent < (size_t{256} << 20)) {
      const ssize_t n = send(fd, run.data(), run.size(), MSG_NOSIGNAL);
      if (n <= 0) return;  // the server closed its end
      sent += static_cast<size_t>(n);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  ReadUntilClosed(c, std::chrono::seconds(20));  // the 400, unless a reset took it
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  writer.join();
  EXPECT_LT(sent.load(), size_t{256} << 20) << "the server read on to the end";
  EXPECT_LT(ResidentBytes(), before + (size_t{64} << 20));
  Client next(s.server->port());
  EXPECT_EQ(next.Send(http::verb::get, "/healthz", "").result_int(), 200);
}

TEST(HttpServer, AStopWaitsForAHalfSentRequestNoLongerThanItsReadTimeout) {
  HttpServerOptions options;
  options.read_timeout = std::chrono::milliseconds(200);
  auto s = std::make_unique<Served>(options);
  Client slow(s->server->port());
  net::write(slow.stream.socket(), net::buffer(std::string("POST /api/hit HTTP/1.1\r\n")));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // read by the server
  const auto start = std::chrono::steady_clock::now();
  s.reset();  // Stop: Run returns once the slow request has timed out
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The answer is written by the server itself: the status line of the request's version, the
// length (none for a 204), Connection as the request asked, and never a header whose value could
// end a line early (a name that is not a token does not compile: HeaderName).
TEST(HttpServer, AnswersInTheRequestsVersionAndDropsAHeaderThatWouldSplitTheAnswer) {
  Result<std::unique_ptr<HttpServer>> listening =
      HttpServer::Listen(AnyPort(), [](const HttpRequest& request) {
        if (request.path == "/gone") return HttpResponse{204, {}, "ignored"};
        if (request.path == "/throws") throw std::runtime_error("a handler's bug");
        return HttpResponse{
            201, {{"X-Path", request.path}, {"X-Bad", "a\r\nSet-Cookie: x=1"}}, "made"};
      });
  ASSERT_TRUE(listening.ok()) << listening.status();
  HttpServer& server = **listening;
  std::thread thread([&] { server.Run(); });
  {
    Client c(server.port());
    const auto one = c.SendRaw("GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(one.result_int(), 201);
    EXPECT_EQ(one.version(), 11);
    EXPECT_EQ(one["X-Path"], "/a");
    EXPECT_EQ(one.count("X-Bad"), 0u);
    EXPECT_EQ(one.count("Set-Cookie"), 0u);
    EXPECT_EQ(one.body(), "made");
    EXPECT_TRUE(one.keep_alive());
  }
  {
    Client c(server.port());
    const auto none = c.SendRaw("DELETE /gone HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(none.result_int(), 204);
    EXPECT_EQ(none.count(http::field::content_length), 0u) << "a 204 has no length";
    EXPECT_EQ(none.body(), "");
    EXPECT_EQ(c.SendRaw("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")["X-Path"], "/next")
        << "and the connection goes on, its framing intact";
  }
  {
    Client c(server.port());
    const auto failed = c.SendRaw("GET /throws HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(failed.result_int(), 500);
    EXPECT_EQ(failed.body(), R"({"error":"internal error"})");
    EXPECT_EQ(c.SendRaw("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")["X-Path"], "/next");
  }
  Client old(server.port());
  const auto answer = old.SendRaw("GET /b HTTP/1.0\r\n\r\n");
  EXPECT_EQ(answer.version(), 10);
  EXPECT_EQ(answer.result_int(), 201);
  EXPECT_FALSE(answer.keep_alive()) << "HTTP/1.0 without keep-alive: closed after the answer";
  server.Stop();
  thread.join();
}

// A LaterHandler that holds the answers to GET /later until a pipe it waits on is readable or
// its deadline comes, drops the answer to GET /drop, closes its pipe at GET /close (the next
// /later opens another, as a store's client connects again), and answers anything else at once.
class PipeHandler final : public HttpServer::LaterHandler {
 public:
  explicit PipeHandler(Duration deadline) : deadline_(deadline) { Open(); }
  ~PipeHandler() override { Close(); }
  void Take(std::span<const HttpRequest* const> requests,
            std::span<HttpServer::Answer> answers) override {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i]->path == "/later") {
        if (fds_[0] < 0) Open();
        held_.push_back(std::move(answers[i]));
        ++held;
      } else if (requests[i]->path == "/close") {
        Close();
        answers[i](HttpResponse{200, {}, "closed"});
      } else if (requests[i]->path != "/drop") {
        answers[i](HttpResponse{200, {}, "now"});
      }
    }
  }
  std::optional<Wait> Waiting() override {
    if (held_.empty()) return std::nullopt;
    return Wait{fds_[0], connection_, std::chrono::steady_clock::now() + Steady(deadline_)};
  }
  void Waited(bool readable) override {
    // The descriptor is back to blocking, as the handler left it: a read of it waits.
    waited_blocking = (fcntl(fds_[0], F_GETFL) & O_NONBLOCK) == 0;
    char byte = 0;
    if (readable) {
      EXPECT_EQ(read(fds_[0], &byte, 1), 1);
    }
    for (HttpServer::Answer& a : held_) a(HttpResponse{200, {}, readable ? "readable" : "late"});
    held_.clear();
  }
  void Wake() { EXPECT_EQ(write(fds_[1], "x", 1), 1); }

  std::atomic<int> held{0};
  std::atomic<bool> waited_blocking{false};

 private:
  static std::chrono::steady_clock::duration Steady(Duration d) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
  }

  void Open() {
    EXPECT_EQ(pipe(fds_), 0);
    ++connection_;
  }
  void Close() {
    for (int& fd : fds_) {
      if (fd >= 0) close(fd);
      fd = -1;
    }
  }

  Duration deadline_;
  int fds_[2] = {-1, -1};
  int64_t connection_ = 0;
  std::vector<HttpServer::Answer> held_;
};

struct ServedLater {
  PipeHandler* handler = nullptr;
  std::unique_ptr<HttpServer> server;
  std::thread thread;

  explicit ServedLater(Duration deadline) {
    auto h = std::make_unique<PipeHandler>(deadline);
    handler = h.get();
    std::vector<std::unique_ptr<HttpServer::LaterHandler>> handlers;
    handlers.push_back(std::move(h));
    Result<std::unique_ptr<HttpServer>> listening =
        HttpServer::Listen(AnyPort(), std::move(handlers));
    EXPECT_TRUE(listening.ok()) << listening.status();
    server = *std::move(listening);
    thread = std::thread([this] { server->Run(); });
  }
  ~ServedLater() {
    server->Stop();
    thread.join();
  }
};

// While a request waits for its answer (serve on Redis: its round to the store is out), the
// thread reads and answers its other connections; the answer comes once what the handler waits
// for is readable.
TEST(HttpServer, AHandlerThatAnswersLaterLetsItsThreadServeOtherConnectionsMeanwhile) {
  ServedLater s(std::chrono::seconds(30));
  std::atomic<bool> answered{false};
  std::string body;
  std::thread waiting([&] {
    Client c(s.server->port());
    body = c.Send(http::verb::get, "/later").body();
    answered = true;
  });
  while (s.handler->held == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Client other(s.server->port());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(other.Send(http::verb::get, "/now").body(), "now");
  EXPECT_FALSE(answered);
  s.handler->Wake();
  waiting.join();
  EXPECT_EQ(body, "readable");
  EXPECT_TRUE(s.handler->waited_blocking);
}

// What the handler waits for that never comes: it is told at the deadline. An answer it drops
// is a 500.
TEST(HttpServer, AWaitEndsAtItsDeadlineAndAnAnswerDroppedIsA500) {
  ServedLater s(std::chrono::milliseconds(50));
  Client c(s.server->port());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.Send(http::verb::get, "/later").body(), "late");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(50));
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(c.Send(http::verb::get, "/drop").result_int(), 500);
  EXPECT_EQ(c.Send(http::verb::get, "/now").body(), "now");
}

// A handler's connection closed and opened again leaves the thread's HTTP connections served,
// the one given the closed descriptor's number among them: the thread lets go of a descriptor
// the handler may close as soon as the handler stops waiting on it, not when it next waits.
TEST(HttpServer, AHandlersConnectionClosedAndOpenedAgainLeavesEveryHttpConnectionServed) {
  ServedLater s(std::chrono::seconds(30));
  Client c(s.server->port());
  const auto later = [&](Client& client) {
    std::thread wake([&] {
      while (s.handler->held == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      s.handler->held = 0;
      s.handler->Wake();
    });
    const std::string body = client.Send(http::verb::get, "/later").body();
    wake.join();
    return body;
  };
  EXPECT_EQ(later(c), "readable");
  // A client socket made now, connected once the pipe is closed: the server's end of it is
  // likely to get the pipe's number.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(c.Send(http::verb::get, "/close").body(), "closed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(s.server->port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  // A request on it, and the body of its answer ("" when none came within 2 s).
  const auto get = [fd](const std::string& path) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return std::string();
    }
    std::string in;
    while (true) {
      const size_t end = in.find("\r\n\r\n");
      const size_t length_at = in.find("Content-Length: ");
      if (end != std::string::npos && length_at < end &&
          in.size() >= end + 4 + std::stoul(in.substr(length_at + 16))) {
        return in.substr(end + 4);
      }
      pollfd p{fd, POLLIN, 0};
      char chunk[4096];
      if (poll(&p, 1, 2000) <= 0) return std::string();
      const ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return std::string();
      in.append(chunk, static_cast<size_t>(n));
    }
  };
  EXPECT_EQ(get("/now"), "now");
  EXPECT_EQ(later(c), "readable");  // on a new pipe
  EXPECT_EQ(get("/now"), "now");
  close(fd);
}

// A header's value that would end its line (CR, LF) is found at every place of every length,
// sixteen bytes at a time and in the rest alike. (A name is a token by its type: HeaderName's
// constructor does not compile for another literal.)
TEST(HttpWire, FieldTextFindsALineBreakAnywhere) {
  static_assert(HeaderName("X-RateLimit-Limit").view() == "X-RateLimit-Limit");
  for (size_t length = 0; length <= 40; ++length) {
    const std::string clean(length, 'a');
    EXPECT_TRUE(FieldText(clean)) << length;
    for (size_t at = 0; at < length; ++at) {
      for (const char c : {'\r', '\n', ':', '\0', '\x8d', 'M'}) {
        std::string text = clean;
        text[at] = c;
        EXPECT_EQ(FieldText(text), c != '\r' && c != '\n') << length << " " << at << " " << int{c};
      }
    }
  }
}

// An answer cleared for the next to be written in keeps its memory, unless its body is past a
// kilobyte (a thread keeps one for each connection of its largest batch).
TEST(HttpResponse, ClearKeepsTheRoomOfAnAnswerUpToAKilobyte) {
  HttpResponse small{429, {{"Retry-After", "7"}}, std::string(1000, 'x')};
  const char* const body = small.body.data();
  const AnswerHeader* const headers = small.headers.data();
  small.Clear();
  EXPECT_EQ(small.status, 200);
  EXPECT_TRUE(small.body.empty());
  EXPECT_TRUE(small.headers.empty());
  EXPECT_EQ(small.body.data(), body);
  EXPECT_GE(small.body.capacity(), 1000u);
  EXPECT_GE(small.headers.capacity(), 1u);
  EXPECT_EQ(small.headers.data(), headers);
  HttpResponse large{200, {}, std::string(100'000, 'x')};
  large.Clear();
  EXPECT_TRUE(large.body.empty());
  EXPECT_LT(large.body.capacity(), 100'000u);
}

// A handler that answers in place is handed, on a kept-alive connection, the answer it wrote
// before: empty, with that answer's memory.
TEST(HttpServer, AHandlerThatAnswersInPlaceIsHandedTheRoomOfTheAnswerBefore) {
  std::vector<std::string> seen;  // on the server's thread, read after it stops
  std::vector<HttpServer::BatchHandler> handlers;
  handlers.push_back(HttpServer::OneByOne(
      HttpServer::AnswerInRoom([&seen](const HttpRequest& request, HttpResponse& answer) {
        seen.push_back(absl::StrCat(answer.status, " ", answer.body.size(), " ",
                                    answer.headers.size(), " ", answer.body.capacity() >= 300));
        answer.status = 201;
        answer.body.assign(300, 'x');
        answer.headers.push_back({"X-Path", request.path});
      })));
  Result<std::unique_ptr<HttpServer>> listening =
      HttpServer::Listen(AnyPort(), std::move(handlers));
  ASSERT_TRUE(listening.ok()) << listening.status();
  std::thread thread([&] { (*listening)->Run(); });
  {
    Client c((*listening)->port());
    for (const char* path : {"/a", "/b"}) {
      const auto r = c.Send(http::verb::get, path, "");
      EXPECT_EQ(r.result_int(), 201);
      EXPECT_EQ(r["X-Path"], path);
      EXPECT_EQ(r.body(), std::string(300, 'x'));
    }
  }
  (*listening)->Stop();
  thread.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"200 0 0 0", "200 0 0 1"}));
}

TEST(HttpServer, APortInUseOrAHostThatIsNoAddressIsAClearError) {
  Served s;
  HttpServerOptions taken;
  taken.port = s.server->port();
  const auto again = HttpServer::Listen(taken, nullptr);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(again.status().message().find("cannot listen on 127.0.0.1:"), std::string::npos);
  HttpServerOptions bad;
  bad.host = "localhost:80";
  EXPECT_EQ(HttpServer::Listen(bad, nullptr).status().message(),
            "'localhost:80' is not an IP address to listen on");
}

}  // namespace
}  // namespace ratelab
