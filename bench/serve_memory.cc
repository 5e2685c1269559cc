// What `ratelab serve` holds for its in-process counters, against the bare map in the same run:
//
//   peer     an absl::flat_hash_map of the same keys to a fixed window's state (16 bytes), in
//            this process: what the keys cost with nothing around them
//   serve    `ratelab serve` (in process, one fixed window of 5 per 20 s per user on /api/hit),
//            sent one distinct user's hit per key over loopback, pipelined on 4 connections
//
// Prints each one's resident memory (VmRSS) before, with the keys live, and, for serve, once the
// keys have gone idle (their windows past: serve drops them every second and gives the memory
// back), with the bytes a key costs and serve's over the peer's.
//   build/bench/serve_memory [--keys N] [--max-keys N]
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "testing/process.h"
#include "testing/raw_connection.h"

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Key(int64_t i) { return "k" + std::to_string(i); }

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  int64_t keys = 1'000'000;
  std::string max_keys = "2000000";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--keys") {
      keys = std::atoll(argv[i + 1]);
    } else if (flag == "--max-keys") {
      max_keys = argv[i + 1];
    } else {
      std::fprintf(stderr, "serve_memory: unknown option %s (expected --keys or --max-keys)\n",
                   argv[i]);
      return 2;
    }
  }

  // The peer: the same keys (as serve keys them) in a bare map of a fixed window's state.
  struct State {
    int64_t window_index;
    int64_t count;
  };
  const int64_t peer_before = ratelab::testing_process::ResidentBytes(getpid());
  int64_t peer_bytes = 0;
  {
    absl::flat_hash_map<std::string, State> bare;
    for (int64_t i = 0; i < keys; ++i) bare[std::string("user:") + Key(i) + ":/api/hit"] = {1, 1};
    peer_bytes = ratelab::testing_process::ResidentBytes(getpid()) - peer_before;
  }

  // serve.
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("ratelab-serve-memory-" + std::to_string(getpid())))
                              .string();
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/rules.yaml")
      << "rules:\n  - {scope_type: user, endpoint: /api/hit, algorithm: fixed-window, "
         "max_requests: 5, window_seconds: 20}\n";
  const pid_t pid = ratelab::testing_process::Spawn(
      {RATELAB_BINARY, "serve", "--listen", "127.0.0.1:0", "--rules", dir + "/rules.yaml",
       "--max-keys", max_keys, "--threads", "2"},
      "", dir + "/err.txt");
  if (pid < 0) {
    std::fprintf(stderr, "serve_memory: cannot start %s\n", RATELAB_BINARY);
    return 2;
  }
  const std::optional<uint16_t> started_on =
      ratelab::testing_process::ServePort(dir + "/err.txt", seconds(10));
  if (!started_on) {
    std::fprintf(stderr, "serve_memory: serve did not start: %s\n", Read(dir + "/err.txt").c_str());
    kill(pid, SIGKILL);
    return 2;
  }
  const uint16_t port = *started_on;
  std::this_thread::sleep_for(milliseconds(200));
  const int64_t serve_before = ratelab::testing_process::ResidentBytes(pid);
  constexpr int kSenders = 4, kBatch = 250;
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([&, s] {
      ratelab::testing_raw::Connection c(port);
      for (int64_t first = s * (keys / kSenders); first < (s + 1) * (keys / kSenders);
           first += kBatch) {
        std::string batch;
        for (int64_t k = first; k < first + kBatch; ++k) {
          const std::string body = "{\"userId\":\"" + Key(k) + "\"}";
          batch += "POST /api/hit HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body;
        }
        if (!c.Send(batch)) return;
        c.ReadAnswers(kBatch);
      }
    });
  }
  for (std::thread& t : senders) t.join();
  const double sent_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const int64_t serve_live = ratelab::testing_process::ResidentBytes(pid);
  // Idle once the 20 s window has passed; dropped at the next sweep (every second, a second
  // behind); memory handed back then.
  std::this_thread::sleep_for(seconds(24));
  const int64_t serve_idle = ratelab::testing_process::ResidentBytes(pid);
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  std::filesystem::remove_all(dir);

  const int64_t serve_bytes = serve_live - serve_before;
  std::printf("%lld keys (sent to serve in %.1f s)\n", static_cast<long long>(keys), sent_s);
  std::printf("%-28s %10s %12s %10s %12s\n", "", "before MiB", "live MiB", "bytes/key", "idle MiB");
  std::printf("%-28s %10.1f %12.1f %10.1f %12s\n", "bare flat_hash_map (peer)", Mib(peer_before),
              Mib(peer_before + peer_bytes), static_cast<double>(peer_bytes) / keys, "-");
  std::printf("%-28s %10.1f %12.1f %10.1f %12.1f\n", "ratelab serve", Mib(serve_before),
              Mib(serve_live), static_cast<double>(serve_bytes) / keys, Mib(serve_idle));
  std::printf("serve over the peer, a key: %.2fx; idle RSS over the start: %.2f\n",
              static_cast<double>(serve_bytes) / static_cast<double>(peer_bytes),
              static_cast<double>(serve_idle) / static_cast<double>(serve_before));
  return 0;
}
