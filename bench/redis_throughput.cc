// Decisions per second and latency of the Lua protocols through RedisKv on a private
// redis-server, beside redis-benchmark sending EVALSHA of the same script to the same server with
// the same number of connections and the same pipeline depth. The last column is ratelab's rate
// over redis-benchmark's.
//
// ratelab runs the protocol's own code (the Decide coroutine, its keys and arguments, its reply
// parsing) for random users among 10 000. On one connection without pipelining, each step runs
// at once (InlineExecutor: ratelab's real mode). Otherwise, like redis-benchmark, one thread
// keeps every connection busy: on each, P requests are started together and their steps sent in
// one write by a RedisPipeline (P = 1 without pipelining), as `ratelab serve` sends the
// decisions of the requests it read together. Latency is from sending a command (or a pipeline)
// to reading its reply, as redis-benchmark measures it.
// Policies are generous (a million a second per user), so every decision takes the script's
// admitting path on both sides.
//
// Two cores shared by the server and both clients move one run's figures by a tenth either way,
// so each setting is measured in several rounds, the two sides taking turns to go first, and the
// median of each side's rounds is shown (as postgres_throughput does).
//
// Run: build/bench/redis_throughput [--seconds S] [--rounds R] [--connections "C ..."]
//                                   [--pipelines "P ..."]   (defaults 2, 3, "1 16 50", "1 16")
#include <stdio.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/peer_figures.h"
#include "impl/core/frame_pool.h"
#include "impl/core/system_clock.h"
#include "impl/limiters/kv_gcra_lua.h"
#include "impl/limiters/kv_lua_limiters.h"
#include "impl/limiters/protocol.h"
#include "impl/store/redis_kv.h"
#include "impl/store/redis_pipeline.h"
#include "impl/store/redis_server.h"
#include "sim/random.h"

namespace ratelab {
namespace {

using Argv = std::vector<std::string>;
constexpr int kUsers = 10'000;

Policy GenerousPolicy(const std::string& protocol) {
  const Algorithm a = protocol == "kv-gcra-lua" ? Algorithm::kGcra : Algorithm::kTokenBucket;
  return Policy::Bucket(a, 1'000'000, std::chrono::microseconds(1));
}

Request RandomRequest(Random& random, const Clock& clock) {
  return Request{"user", "u" + std::to_string(random.Uniform(0, kUsers)), "/api", 1, clock.Now()};
}

[[noreturn]] void Die(const Status& s) {
  std::cerr << "redis_throughput: " << s << "\n";
  std::exit(1);
}

// One connection with its batch of decisions in flight.
struct Lane {
  Lane(const std::string& protocol, const RedisEndpoint& endpoint, uint64_t seed)
      : redis(endpoint),
        pipeline(redis),
        decide(*MakeProtocol(protocol, GenerousPolicy(protocol), {&pipeline, nullptr})),
        random(seed) {}

  // Starts `n` decisions and sends their first steps.
  void Send(int n, const Clock& clock) {
    contexts.clear();
    requests.clear();
    tasks.clear();
    for (int i = 0; i < n; ++i) requests.push_back(RandomRequest(random, clock));
    for (int i = 0; i < n; ++i) {
      contexts.emplace_back(pipeline, i, &frames);
      tasks.push_back(decide->Decide(contexts.back(), requests[static_cast<size_t>(i)]));
      tasks.back().Start();
    }
    sent = clock.Now();
    pipeline.Send();
  }
  // Reads the replies and finishes the decisions (a step after the first, as after NOSCRIPT,
  // takes another round trip); returns how many were made.
  int64_t Receive(const Clock& clock, std::vector<double>& latencies) {
    do {
      const size_t steps = pipeline.in_flight();
      pipeline.Receive();
      const double ms = std::chrono::duration<double, std::milli>(clock.Now() - sent).count();
      for (size_t i = 0; i < steps; ++i) latencies.push_back(ms);
      sent = clock.Now();
    } while (pipeline.Send());
    for (Task<Result<Decision>>& t : tasks) {
      if (!t.done()) Die(absl::InternalError("a decision did not finish"));
      if (!t.result().ok()) Die(t.result().status());
    }
    return static_cast<int64_t>(tasks.size());
  }

  // The decisions' coroutine frames, as a thread of `ratelab serve` keeps them. Declared before
  // the tasks whose frames it holds.
  FramePool frames;
  RedisKv redis;
  RedisPipeline pipeline;
  std::unique_ptr<Protocol> decide;
  Random random;
  std::deque<Context> contexts;
  std::vector<Request> requests;
  std::vector<Task<Result<Decision>>> tasks;
  Instant sent{};
};

// One connection, one decision at a time, each step run at once: ratelab's real mode.
int64_t Inline(const std::string& protocol, const RedisEndpoint& endpoint, const Clock& clock,
               Instant until, std::vector<double>& latencies) {
  Random random(1);
  RedisKv redis(endpoint);
  const std::unique_ptr<Protocol> decide =
      *MakeProtocol(protocol, GenerousPolicy(protocol), {&redis, nullptr});
  InlineExecutor executor;
  int64_t decisions = 0;
  while (clock.Now() < until) {
    Context ctx(executor);
    const Request request = RandomRequest(random, clock);
    const Instant sent = clock.Now();
    const Result<Decision> d = RunInline(decide->Decide(ctx, request));
    latencies.push_back(std::chrono::duration<double, std::milli>(clock.Now() - sent).count());
    if (!d.ok()) Die(d.status());
    ++decisions;
  }
  return decisions;
}

// `connections` connections driven by one thread, as redis-benchmark drives them: each always
// has a batch in flight.
Figures Ours(const std::string& protocol, const RedisEndpoint& endpoint, int connections,
             int pipeline, double seconds) {
  const SystemClock clock;
  const Instant began = clock.Now();
  const Instant until =
      began + std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
  std::vector<double> latencies;
  int64_t decisions = 0;
  if (connections == 1 && pipeline == 1) {
    decisions = Inline(protocol, endpoint, clock, until, latencies);
  } else {
    std::vector<std::unique_ptr<Lane>> lanes;
    for (int c = 0; c < connections; ++c) {
      lanes.push_back(std::make_unique<Lane>(protocol, endpoint, static_cast<uint64_t>(c) + 1));
    }
    // Each connection gets its next batch as soon as its replies are read, so the server
    // always has work while this thread makes the next requests.
    for (auto& lane : lanes) lane->Send(pipeline, clock);
    while (clock.Now() < until) {
      for (auto& lane : lanes) {
        decisions += lane->Receive(clock, latencies);
        lane->Send(pipeline, clock);
      }
    }
    for (auto& lane : lanes) decisions += lane->Receive(clock, latencies);
  }
  const double elapsed = std::chrono::duration<double>(clock.Now() - began).count();
  return {static_cast<double>(decisions) / elapsed, Percentile(latencies, 0.5),
          Percentile(latencies, 0.99)};
}

std::string Quote(const std::string& s) { return "'" + s + "'"; }

// redis-benchmark's figures for `command` (EVALSHA ...), from its CSV line.
Figures Theirs(const std::string& socket, const Argv& command, int connections, int pipeline,
               int64_t requests) {
  std::string cmd = "redis-benchmark -s " + Quote(socket) + " -c " + std::to_string(connections) +
                    " -P " + std::to_string(pipeline) + " -n " + std::to_string(requests) + " -r " +
                    std::to_string(kUsers) + " --csv";
  for (const std::string& a : command) cmd += " " + Quote(a);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    std::cerr << "redis_throughput: cannot run redis-benchmark\n";
    std::exit(1);
  }
  std::string last;
  char line[4096];
  while (fgets(line, sizeof line, p) != nullptr) {
    if (line[0] != '\0' && std::strncmp(line, "\"test\"", 6) != 0) last = line;
  }
  pclose(p);
  // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
  // "p99_latency_ms","max_latency_ms"
  std::vector<std::string> fields = absl::StrSplit(last, "\",\"");
  if (fields.size() < 8) {
    std::cerr << "redis_throughput: cannot read redis-benchmark's output: " << last << "\n";
    std::exit(1);
  }
  return {std::atof(fields[1].c_str()), std::atof(fields[4].c_str()), std::atof(fields[6].c_str())};
}

// The EVALSHA that `protocol` sends for a random user, for redis-benchmark (__rand_int__ is
// its random number).
Argv BenchmarkCommand(const std::string& protocol, const Clock& clock) {
  const Policy policy = GenerousPolicy(protocol);
  const int64_t now_ms = UnixMillis(clock.Now());
  const std::string key = "rl:{user:u__rand_int__:/api}";
  if (protocol == "kv-gcra-lua") {
    return {"EVALSHA", KvGcraLua::Script().sha,      "1", key,   std::to_string(now_ms * 1000),
            "1",       std::to_string(policy.limit), "1", "1001"};
  }
  return {"EVALSHA", KvTokenBucketLua::Script().sha, "1",   key, std::to_string(policy.limit),
          "1000",    std::to_string(now_ms),         "2000"};
}

// The whole numbers above 0 of a list such as "1 16 50", or nothing when it holds anything else.
std::vector<int> Counts(const char* list) {
  std::vector<int> counts;
  for (const absl::string_view word : absl::StrSplit(list, ' ', absl::SkipEmpty())) {
    int n = 0;
    if (!absl::SimpleAtoi(word, &n) || n < 1) return {};
    counts.push_back(n);
  }
  return counts;
}

int Main(int argc, char** argv) {
  const char* const usage =
      "usage: redis_throughput [--seconds S] [--rounds R] [--connections \"C ...\"] "
      "[--pipelines \"P ...\"]\n"
      "  (defaults 2 seconds a setting, 3 rounds, connections \"1 16 50\", pipelines \"1 16\")\n";
  double seconds = 2;
  int rounds = 3;
  std::vector<int> connection_counts = {1, 16, 50}, pipelines = {1, 16};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::cerr << usage;
      return 2;
    }
    const char* value = argv[++i];
    if (flag == "--seconds") {
      seconds = std::atof(value);
      if (!(seconds > 0)) {
        std::cerr << "redis_throughput: --seconds must be above 0\n";
        return 2;
      }
    } else if (flag == "--rounds") {
      if (!absl::SimpleAtoi(value, &rounds) || rounds < 1) {
        std::cerr << "redis_throughput: --rounds must be a whole number above 0\n";
        return 2;
      }
    } else if (flag == "--connections" || flag == "--pipelines") {
      std::vector<int> counts = Counts(value);
      if (counts.empty()) {
        std::cerr << "redis_throughput: " << flag
                  << " must be whole numbers above 0, apart by spaces, such as \"1 16\"\n";
        return 2;
      }
      (flag == "--connections" ? connection_counts : pipelines) = std::move(counts);
    } else {
      std::cerr << usage;
      return 2;
    }
  }
  Result<std::unique_ptr<RedisServer>> server = RedisServer::Start({});
  if (!server.ok()) {
    std::cerr << "redis_throughput: " << server.status() << "\n";
    return 1;
  }
  const RedisEndpoint endpoint = (*server)->endpoint();
  RedisKv admin(endpoint);
  for (const KvScript* s : {&KvGcraLua::Script(), &KvTokenBucketLua::Script()}) {
    const Argv load = {"SCRIPT", "LOAD", s->body};
    if (Result<KvReply> r = admin.Execute(load); !r.ok() || r->text != s->sha) {
      std::cerr << "redis_throughput: cannot load " << s->name << "\n";
      return 1;
    }
  }
  const SystemClock clock;
  std::printf("redis-server %s, %.1f s per setting, median of %d round%s; latency in ms\n",
              endpoint.Url().c_str(), seconds, rounds, rounds == 1 ? "" : "s");
  std::printf("%-20s %5s %4s | %12s %7s %7s | %12s %7s %7s | %5s\n", "protocol", "conns", "pipe",
              "ratelab/s", "p50", "p99", "redis-bench/s", "p50", "p99", "ratio");
  for (const std::string protocol : {"kv-token-bucket-lua", "kv-gcra-lua"}) {
    for (const int connections : connection_counts) {
      for (const int pipeline : pipelines) {
        std::vector<Figures> ours_rounds, theirs_rounds;
        const auto run_ours = [&] {
          (void)admin.Execute(Argv{"FLUSHDB"});
          ours_rounds.push_back(Ours(protocol, endpoint, connections, pipeline, seconds));
        };
        const auto run_theirs = [&] {
          (void)admin.Execute(Argv{"FLUSHDB"});
          // As many requests as ratelab made in its last round, for about as long a run.
          const double rate = ours_rounds.empty() ? 0 : ours_rounds.back().per_second;
          const auto requests = static_cast<int64_t>(std::max(10'000.0, rate * seconds));
          theirs_rounds.push_back(Theirs(endpoint.unix_path, BenchmarkCommand(protocol, clock),
                                         connections, pipeline, requests));
        };
        TakeTurns(rounds, run_ours, run_theirs);
        const Figures ours = Median(ours_rounds);
        const Figures theirs = Median(theirs_rounds);
        std::printf("%-20s %5d %4d | %12.0f %7.3f %7.3f | %12.0f %7.3f %7.3f | %5.2f\n",
                    protocol.c_str(), connections, pipeline, ours.per_second, ours.p50_ms,
                    ours.p99_ms, theirs.per_second, theirs.p50_ms, theirs.p99_ms,
                    theirs.per_second > 0 ? ours.per_second / theirs.per_second : 0.0);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) { return ratelab::Main(argc, argv); }
