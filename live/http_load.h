// HTTP load for `ratelab probe`: requests sent to a running server over keep-alive connections,
// each connection one thread sending its next request when the last is answered, each request
// no earlier than its place in a schedule, all of them held to a hard cap on requests and on
// their rate. Every exchange is recorded with the instants
// it was sent and answered (by the Clock handed in), its status and the answer's headers.
//
// Plain HTTP/1.1 only (no TLS). A connection that fails is opened again for its next request; a
// request with no answer within the timeout has its exchange say why, and its connection closed.
#ifndef RATELAB_LIVE_HTTP_LOAD_H_
#define RATELAB_LIVE_HTTP_LOAD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/clock.h"
#include "impl/core/status.h"
#include "impl/service/http.h"

namespace ratelab {

// Where an http:// URL points: host, port (80 when left out) and target ("/" when left out).
struct HttpUrl {
  std::string host;
  uint16_t port = 80;
  std::string target = "/";
  bool operator==(const HttpUrl&) const = default;
};

// InvalidArgument naming what is wrong: not http:// (https is refused: no TLS), no host, a port
// that is not 1 to 65535, a space or a control character.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// One request to send.
struct OutgoingRequest {
  std::string label;  // the caller's name for it (probe: the user it is for), kept in its exchange
  std::string method = "GET";
  std::string target = "/";
  std::vector<HttpHeader> headers;
  std::string body;
};

// One request and what became of it.
struct HttpExchange {
  int64_t n = 0;      // its number, from 0: what make(n) was asked
  std::string label;  // its request's
  Instant sent{};
  Instant answered{};  // when the answer was read, or when it was given up
  int status = 0;      // 0: no answer (see `error`)
  std::string error;   // why there was no answer
  // The server answered, in a shape probe does not read (past its bounds, or not HTTP): a fault
  // of the server's, where `error` says which.
  bool unreadable = false;
  std::vector<HttpHeader> headers;  // the answer's that HttpLoadOptions::kept, in order
  std::string body;                 // its first kHttpLoadBodyKept bytes
  bool answered_ok() const { return status != 0; }
};

inline constexpr size_t kHttpLoadBodyKept = 512;

struct HttpLoadOptions {
  HttpUrl url;  // host and port; each request names its own target
  int connections = 1;
  int64_t max_requests = 1000;  // no more are sent
  // No more are sent in any second than this (below 1: no more than one in any 1 / this s).
  double max_per_second = 50;
  // When not empty, request n is sent no earlier than start + schedule[n] (and no more are sent
  // than it holds); else each as soon as the rate allows.
  std::vector<Duration> schedule;
  Duration duration = std::chrono::seconds(10);  // none is sent after start + this
  Duration timeout = std::chrono::seconds(5);    // to connect, and for each exchange
  // The answer's headers an exchange keeps (none: every one). A run holds every exchange until
  // it ends, so a caller that reads a few headers keeps only those.
  std::vector<std::string> kept_headers;
};

// Told about once a second: how long, how many answered.
using HttpLoadProgress = std::function<void(Duration elapsed, int64_t answered)>;

// Sends `make(n)` for n = 0, 1, ... until the cap, the duration or `stop` (asked every few
// milliseconds) says to stop; the exchanges in the order they were numbered (a number taken
// just as the time ran out is never sent). `make` is called from the connections' threads, one
// call at a time. Unavailable when the host cannot be resolved, and when a connection is
// refused (the run stops at the first: nothing listens there).
Result<std::vector<HttpExchange>> RunHttpLoad(const HttpLoadOptions& options, const Clock& clock,
                                              const std::function<OutgoingRequest(int64_t n)>& make,
                                              const HttpLoadProgress& progress = nullptr,
                                              const std::function<bool()>& stop = nullptr);

}  // namespace ratelab

#endif  // RATELAB_LIVE_HTTP_LOAD_H_
