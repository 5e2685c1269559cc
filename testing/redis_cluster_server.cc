#include "testing/redis_cluster_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "impl/store/redis_cluster.h"

namespace ratelab {

namespace {

constexpr int kBusOffset = 10000;  // Redis Cluster's bus listens on port + 10000

}  // namespace

int Bindable(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  int result = -1;
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    result = ntohs(a.sin_port);
  }
  close(fd);
  return result;
}

namespace {

// A free port whose bus port is free too, and not among `taken`.
Result<int> FreePortPair(const std::vector<int>& taken) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = Bindable(0);
    if (port <= 0 || port + kBusOffset > 65535) continue;
    if (std::find(taken.begin(), taken.end(), port) != taken.end()) continue;
    if (Bindable(port + kBusOffset) == port + kBusOffset) return port;
  }
  return absl::UnavailableError("found no free loopback port P with P + 10000 free too");
}

// Runs `args` to its end with output into `log`: its exit status, or -1 if it could not run.
int RunToEnd(std::vector<std::string> args, const std::string& log) {
  const Result<pid_t> pid = SpawnLogged(std::move(args), nullptr, log);
  if (!pid.ok()) return -1;
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether every node reports cluster_state:ok and the same owner for a sample of slots.
bool Converged(const std::vector<RedisEndpoint>& nodes) {
  std::vector<std::string> owners;
  for (const RedisEndpoint& e : nodes) {
    RedisKv kv(e);
    Result<KvReply> info = kv.Execute(std::vector<std::string>{"CLUSTER", "INFO"});
    if (!info.ok() || info->text.find("cluster_state:ok") == std::string::npos) return false;
    RedisClusterKv view({e});
    std::string owner;
    for (int slot = 0; slot < kClusterSlots; slot += 1000) {
      const std::optional<RedisEndpoint> o = view.Owner(slot);
      if (!o) return false;
      owner += o->Url() + " ";
    }
    owners.push_back(owner);
  }
  return std::all_of(owners.begin(), owners.end(),
                     [&](const std::string& o) { return o == owners.front(); });
}

}  // namespace

Result<std::unique_ptr<RedisClusterServers>> RedisClusterServers::Start(int masters) {
  if (!OnPath("redis-cli")) {
    return absl::NotFoundError(
        "redis-cli is not on PATH (install Debian's package redis-tools; scripts/test does)");
  }
  if (masters < 3) return absl::InvalidArgumentError("a Redis Cluster needs at least 3 masters");
  std::unique_ptr<RedisClusterServers> c(new RedisClusterServers());
  for (int i = 0; i < masters; ++i) {
    Result<int> port = FreePortPair(c->ports_);
    if (!port.ok()) return port.status();
    RedisServerOptions options;
    options.port = *port;
    options.extra_args = {"--cluster-enabled",      "yes", "--cluster-config-file", "nodes.conf",
                          "--cluster-node-timeout", "5000"};
    Result<std::unique_ptr<RedisServer>> server = RedisServer::Start(options);
    if (!server.ok()) return server.status();
    c->servers_.push_back(*std::move(server));
    c->ports_.push_back(*port);
  }
  std::vector<std::string> create = {"redis-cli", "--cluster", "create"};
  for (int port : c->ports_) create.push_back("127.0.0.1:" + std::to_string(port));
  for (const char* a : {"--cluster-replicas", "0", "--cluster-yes"}) create.push_back(a);
  const std::string log = c->servers_.front()->dir() + "/cluster-create.log";
  if (RunToEnd(create, log) != 0) {
    return absl::UnavailableError("redis-cli --cluster create failed:\n" + ReadFile(log));
  }
  for (int tries = 0; tries < 400; ++tries) {  // 20 s in steps of 50 ms
    if (Converged(c->endpoints())) return c;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError("the Redis Cluster did not reach cluster_state:ok within 20 s");
}

std::vector<RedisEndpoint> RedisClusterServers::endpoints() const {
  std::vector<RedisEndpoint> out;
  for (int port : ports_) {
    RedisEndpoint e;
    e.host = "127.0.0.1";
    e.port = port;
    out.push_back(e);
  }
  return out;
}

std::string RedisClusterServers::url() const {
  std::string out = "redis-cluster://";
  for (size_t i = 0; i < ports_.size(); ++i) {
    out += (i == 0 ? "" : ",") + std::string("127.0.0.1:") + std::to_string(ports_[i]);
  }
  return out;
}

}  // namespace ratelab
