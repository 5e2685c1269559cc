#include "live/http_load.h"

// Boost 1.74's Asio uses std::exchange without including <utility> itself: first, on its own.
// clang-format off
#include <utility>
// clang-format on
#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/strings/match.h"

namespace ratelab {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// The most of an answer read: a larger one is an error of the exchange.
constexpr uint64_t kMostAnswerBytes = 1 << 20;
constexpr uint32_t kMostAnswerHeaderBytes = 64 << 10;

bool Printable(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// What the connections share.
struct Shared {
  const HttpLoadOptions& options;
  const Clock& clock;
  const std::function<OutgoingRequest(int64_t)>& make;
  const tcp::resolver::results_type& endpoints;
  Instant start{};
  Instant end{};
  std::atomic<int64_t> answered = 0;
  std::atomic<bool> stopping = false;
  // A connection was refused: nothing listens there, so the run stops.
  std::atomic<bool> refused = false;
  std::mutex making{};

  // The next request's number and the instant it may be sent: no earlier than its place in the
  // schedule, than the last one's, or than `period` after the one `per_period` before it (so no
  // `period` holds more than `per_period`). Nothing when the cap is reached.
  std::optional<std::pair<int64_t, Instant>> Take() {
    std::lock_guard lock(taking);
    const int64_t n = next;
    if (n >= options.max_requests ||
        (!options.schedule.empty() && n >= static_cast<int64_t>(options.schedule.size()))) {
      return std::nullopt;
    }
    ++next;
    Instant at = start + (options.schedule.empty() ? Duration(0) : options.schedule[n]);
    if (!granted.empty()) at = std::max(at, granted.back());
    if (static_cast<int64_t>(granted.size()) == per_period) {
      at = std::max(at, granted.front() + period);
      granted.pop_front();
    }
    granted.push_back(at);
    return std::pair(n, at);
  }

  // Waits until request n may go, no sooner than `period` after request n - per_period went
  // (however late each connection came to send its own), and records that it goes: the instant,
  // or nothing when the time is up or the run is stopped first.
  std::optional<Instant> Go(int64_t n) {
    const size_t slot = static_cast<size_t>(n % per_period);
    for (;;) {
      {
        std::lock_guard lock(taking);
        const Instant now = clock.Now();
        if (n < per_period || (went_n[slot] == n - per_period && now >= went[slot] + period)) {
          went[slot] = now;
          went_n[slot] = n;
          return now;
        }
      }
      if (stopping.load() || clock.Now() >= end) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  std::mutex taking{};
  int64_t next = 0;
  int64_t per_period = 1;
  Duration period{};
  std::deque<Instant> granted{};  // the instants of the last `per_period` requests taken
  std::vector<Instant> went{};    // when request k went, at k % per_period
  std::vector<int64_t> went_n{};  // which k that is
};

// One keep-alive connection, opened when needed.
class Connection {
 public:
  explicit Connection(Shared& shared) : shared_(shared) {}

  void Run(std::vector<HttpExchange>& out) {
    for (;;) {
      const std::optional<std::pair<int64_t, Instant>> turn = shared_.Take();
      if (!turn || !WaitUntil(turn->second)) return;
      const int64_t n = turn->first;
      OutgoingRequest request;
      {
        std::lock_guard lock(shared_.making);
        request = shared_.make(n);
      }
      std::optional<HttpExchange> exchange = Exchange(n, request);
      if (!exchange) return;
      out.push_back(*std::move(exchange));
      if (out.back().answered_ok()) shared_.answered.fetch_add(1);
    }
  }

 private:
  // Waits until `due`: false when the time is up or the run is stopped first.
  bool WaitUntil(Instant due) {
    for (;;) {
      const Instant now = shared_.clock.Now();
      if (shared_.stopping.load() || now >= shared_.end) return false;
      if (now >= due) return true;
      std::this_thread::sleep_for(std::min<Duration>(due - now, std::chrono::milliseconds(10)));
    }
  }

  // Runs the operation started on the io_context to its end.
  void Await() {
    ioc_.restart();
    ioc_.run();
  }

  // The exchange of request n, or nothing when it was not sent (the time ran out first).
  std::optional<HttpExchange> Exchange(int64_t n, const OutgoingRequest& request) {
    HttpExchange ex;
    ex.n = n;
    ex.label = request.label;
    beast::error_code ec;
    const auto failed = [&](std::string_view what) {
      ex.answered = shared_.clock.Now();
      ex.error = std::string(what) + ": " + ec.message();
      stream_.reset();
      return ex;
    };
    http::request<http::string_body> message;
    message.method_string(request.method);
    message.target(request.target);
    message.version(11);
    message.set(http::field::host, shared_.options.url.host);
    for (const HttpHeader& h : request.headers) message.insert(h.name, h.value);
    message.body() = request.body;
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
        request.method == "PATCH") {
      message.prepare_payload();
    }
    if (!stream_) {
      stream_.emplace(ioc_);
      stream_->expires_after(shared_.options.timeout);
      stream_->async_connect(shared_.endpoints,
                             [&](beast::error_code e, const tcp::endpoint&) { ec = e; });
      Await();
      if (!ec) stream_->socket().set_option(tcp::no_delay(true), ec);
    }
    const std::optional<Instant> went = shared_.Go(n);
    if (!went) return std::nullopt;
    ex.sent = *went;
    if (ec == net::error::connection_refused) {
      shared_.refused = true;
      shared_.stopping = true;
    }
    if (ec) return failed("cannot connect");
    stream_->expires_after(shared_.options.timeout);
    http::async_write(*stream_, message, [&](beast::error_code e, size_t) { ec = e; });
    Await();
    if (ec) return failed("cannot send");
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMostAnswerBytes);
    parser.header_limit(kMostAnswerHeaderBytes);
    // The header first, then the body: read in one go, Beast 1.74 goes on past a length over the
    // limit and reserves all of it (a server's "Content-Length: 99999999999" ended probe).
    http::async_read_header(*stream_, buffer_, parser,
                            [&](beast::error_code e, size_t) { ec = e; });
    Await();
    if (!ec && !parser.is_done()) {
      http::async_read(*stream_, buffer_, parser, [&](beast::error_code e, size_t) { ec = e; });
      Await();
    }
    if (ec) {
      buffer_.clear();
      // Bytes came that are no answer probe reads: the server's fault, not the network's.
      ex.unreadable = ec.category() == http::make_error_code(http::error::body_limit).category() &&
                      ec != http::error::end_of_stream && ec != http::error::partial_message;
      if (ec == http::error::body_limit) {
        return failed("its answer's body is longer than the " + std::to_string(kMostAnswerBytes) +
                      " bytes probe reads");
      }
      if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
        return failed("its answer's header is longer than the " +
                      std::to_string(kMostAnswerHeaderBytes) + " bytes probe reads");
      }
      if (ex.unreadable) return failed("its answer is not HTTP/1.1");
      return failed(ec == beast::error::timeout ? "no answer in time" : "cannot read the answer");
    }
    ex.answered = shared_.clock.Now();
    const http::response<http::string_body>& answer = parser.get();
    ex.status = static_cast<int>(answer.result_int());
    const std::vector<std::string>& kept = shared_.options.kept_headers;
    for (const auto& field : answer) {
      const beast::string_view name = field.name_string();
      if (!kept.empty() && std::none_of(kept.begin(), kept.end(), [&](const std::string& k) {
            return beast::iequals(name, k);
          })) {
        continue;
      }
      ex.headers.push_back({std::string(name), std::string(field.value())});
    }
    ex.body = answer.body().substr(0, kHttpLoadBodyKept);
    if (!answer.keep_alive()) stream_.reset();
    return ex;
  }

  Shared& shared_;
  net::io_context ioc_;
  std::optional<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_{kMostAnswerHeaderBytes};  // read, not yet parsed
};

}  // namespace

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  const auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError("'" + std::string(url) + "' " + std::string(why));
  };
  if (!Printable(url)) return bad("has a space or a control character");
  const absl::string_view scheme(url.data(), std::min<size_t>(url.size(), 8));
  if (absl::StartsWithIgnoreCase(scheme, "https://")) {
    return bad("is HTTPS, which probe does not speak: give an http:// URL");
  }
  if (!absl::StartsWithIgnoreCase(scheme, "http://")) return bad("is not an http:// URL");
  std::string_view rest = url.substr(7);
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpUrl out;
  if (slash != std::string_view::npos) out.target = std::string(rest.substr(slash));
  if (authority.find('@') != std::string_view::npos) return bad("has a user name: give none");
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an IPv6 host without its ']'");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty() && !after.starts_with(':')) return bad("has junk after its IPv6 host");
    if (!after.empty()) port = after.substr(1);
    if (after == ":") return bad("has an empty port");
  } else {
    const size_t colon = authority.find(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("has an empty port");
    }
  }
  if (out.host.empty()) return bad("has no host");
  if (!port.empty()) {
    int value = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || value > 65535) return bad("has a port that is not 1 to 65535");
      value = value * 10 + (c - '0');
    }
    if (value < 1 || value > 65535) return bad("has a port that is not 1 to 65535");
    out.port = static_cast<uint16_t>(value);
  }
  return out;
}

Result<std::vector<HttpExchange>> RunHttpLoad(const HttpLoadOptions& options, const Clock& clock,
                                              const std::function<OutgoingRequest(int64_t n)>& make,
                                              const HttpLoadProgress& progress,
                                              const std::function<bool()>& stop) {
  net::io_context resolving;
  tcp::resolver resolver(resolving);
  beast::error_code ec;
  const tcp::resolver::results_type endpoints =
      resolver.resolve(options.url.host, std::to_string(options.url.port), ec);
  if (ec) {
    return absl::UnavailableError("cannot resolve " + options.url.host + ": " + ec.message());
  }
  Shared shared{options, clock, make, endpoints};
  shared.start = clock.Now();
  shared.end = shared.start + options.duration;
  // At most max_per_second in any second; below one a second, one in each 1 / max_per_second.
  shared.per_period = std::max<int64_t>(1, static_cast<int64_t>(options.max_per_second));
  shared.period = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(
      static_cast<double>(shared.per_period) / options.max_per_second));
  shared.went.resize(static_cast<size_t>(shared.per_period));
  shared.went_n.assign(static_cast<size_t>(shared.per_period), -1);
  const int connections = std::max(1, options.connections);
  std::vector<std::vector<HttpExchange>> recorded(static_cast<size_t>(connections));
  std::atomic<int> running = connections;
  {
    std::vector<std::jthread> threads;
    for (int c = 0; c < connections; ++c) {
      threads.emplace_back([&, c] {
        Connection(shared).Run(recorded[static_cast<size_t>(c)]);
        running.fetch_sub(1);
      });
    }
    Instant told = shared.start;
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (stop && stop()) shared.stopping = true;
      const Instant now = clock.Now();
      if (progress && now - told >= std::chrono::seconds(1)) {
        told = now;
        progress(now - shared.start, shared.answered.load());
      }
    }
  }
  if (shared.refused) {
    return absl::UnavailableError("cannot connect to " + options.url.host + ":" +
                                  std::to_string(options.url.port) +
                                  ": connection refused (nothing listens there: is the server "
                                  "running?); stopped at once");
  }
  std::vector<HttpExchange> out;
  for (std::vector<HttpExchange>& r : recorded) {
    std::move(r.begin(), r.end(), std::back_inserter(out));
  }
  std::sort(out.begin(), out.end(),
            [](const HttpExchange& a, const HttpExchange& b) { return a.n < b.n; });
  return out;
}

}  // namespace ratelab
