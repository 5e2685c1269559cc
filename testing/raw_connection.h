// A raw HTTP/1.1 connection to a loopback port, for tests and benchmarks that send what no
// library would (bytes that are not HTTP, requests pipelined in batches) and read answers back by
// their Content-Length. Header-only, so a benchmark built without the tests can use it.
#ifndef RATELAB_TESTING_RAW_CONNECTION_H_
#define RATELAB_TESTING_RAW_CONNECTION_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ratelab::testing_raw {

using std::chrono::milliseconds;

// A raw connection to loopback `port`, closed when it goes.
class Connection {
 public:
  explicit Connection(uint16_t port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        fd_ >= 0 && connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  }
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool connected() const { return connected_; }
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // What comes until the server closes the connection, or `wait` passes with nothing more.
  std::string ReadUntilClosed(milliseconds wait = milliseconds(2000)) {
    std::string all;
    char chunk[1 << 16];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return all;
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return all;
      all.append(chunk, static_cast<size_t>(n));
    }
  }
  // Reads whole answers until `count` have come (or the server closes, or `wait` passes with
  // nothing more); their statuses, and -1 where bytes came that are no answer. (An answer to
  // HEAD has a length and no body: read it with ReadUntilClosed.)
  std::vector<int> ReadAnswers(size_t count, milliseconds wait = milliseconds(10'000)) {
    std::vector<int> statuses;
    char chunk[1 << 16];
    while (statuses.size() < count) {
      // Every whole answer in hand, up to `count`.
      while (statuses.size() < count) {
        const size_t end = pending_.find("\r\n\r\n");
        if (end == std::string::npos) break;
        if (!pending_.starts_with("HTTP/1.1 ") || end < 12) {
          statuses.push_back(-1);  // not an answer
          return statuses;
        }
        const size_t length_at = pending_.find("Content-Length: ");
        const size_t length =
            length_at < end ? std::stoul(pending_.substr(length_at + 16)) : size_t{0};
        if (pending_.size() < end + 4 + length) break;
        statuses.push_back(std::stoi(pending_.substr(9, 3)));
        pending_.erase(0, end + 4 + length);
      }
      if (statuses.size() >= count) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) break;
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      pending_.append(chunk, static_cast<size_t>(n));
    }
    return statuses;
  }

 private:
  int fd_;
  bool connected_ = false;
  std::string pending_;
};

}  // namespace ratelab::testing_raw

#endif  // RATELAB_TESTING_RAW_CONNECTION_H_
