#include "cli/stress_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "cli/ratelab_cli.h"
#include "impl/core/system_clock.h"
#include "impl/limiters/protocol.h"
#include "impl/store/redis_cluster.h"
#include "impl/store/redis_kv.h"
#include "impl/store/redis_server.h"
#include "model/oracles.h"

namespace ratelab {

namespace {

constexpr size_t kWitnessLinesShown = 16;
// The most requests a run records (each is held in memory until the end, a few hundred bytes):
// the threads stop there, and the run says so.
constexpr int64_t kMaxRequests = 5'000'000;

// The inline executor's way (each step runs at once, on the caller's thread), noting each step
// and when its answer came, so that a witness shows how the racers' steps interleaved.
class RecordingExecutor final : public Executor {
 public:
  explicit RecordingExecutor(const Clock& clock) : clock_(clock) {}
  bool RunsInline() const override { return false; }
  void Submit(PendingStep& step) override {
    step.Apply();
    steps_.push_back({step.label(), clock_.Now()});
    step.resume.resume();
  }
  StepList TakeSteps() { return std::exchange(steps_, {}); }

 private:
  const Clock& clock_;
  StepList steps_;
};

struct Plan {
  std::string protocol;  // a registry name, or "lua:FILE"
  const ProtocolInfo* info = nullptr;
  std::shared_ptr<const LimiterSpec::Custom> custom;  // a user's script
  Policy policy;
  std::string url;  // the store
  int threads = 0;
  Duration duration{};
  std::vector<std::string> users;
};

// What one thread did: its requests, and the error that stopped it, if any.
struct Worker {
  History history;
  Status failure;
};

// One limiter process: its own connection and protocol instance, sending until `deadline`, or
// until the run has recorded kMaxRequests.
void Work(const Plan& plan, int node, Instant deadline, const Clock& clock,
          std::atomic<int64_t>& answered, std::atomic<int>& running, Worker& w) {
  struct Done {
    std::atomic<int>& running;
    ~Done() { running.fetch_sub(1); }
  } done{running};
  std::unique_ptr<Kv> kv = *OpenRedisUrl(plan.url);  // checked in StressCommand
  const Stores stores{kv.get(), nullptr};
  Result<std::unique_ptr<Protocol>> protocol =
      plan.custom ? plan.custom->make(plan.policy, stores)
                  : MakeProtocol(plan.protocol, plan.policy, stores);
  if (!protocol.ok()) {
    w.failure = protocol.status();
    return;
  }
  (*protocol)->SeedProcess(0x5eed0000 + static_cast<uint64_t>(node));  // its own Math.random
  RecordingExecutor executor(clock);
  for (size_t i = static_cast<size_t>(node);; ++i) {
    const Request request{"user", plan.users[i % plan.users.size()], "/stress", 1, clock.Now()};
    if (request.now >= deadline || answered.load(std::memory_order_relaxed) >= kMaxRequests) {
      return;
    }
    HistoryEvent e;
    e.key = LimiterKey(request);
    e.node = node;
    e.invoke = e.node_now = request.now;
    Context ctx(executor);
    Task<Result<Decision>> task = (*protocol)->Decide(ctx, request);
    task.Start();
    if (!task.done()) std::terminate();  // every step ran at once
    Result<Decision> decision = std::move(task.result());
    e.complete = e.apply = clock.Now();  // where in between it took effect, no one knows
    e.steps = executor.TakeSteps();
    if (!decision.ok()) {
      w.failure = decision.status();
      return;
    }
    e.decision = *decision;
    w.history.push_back(std::move(e));
    answered.fetch_add(1, std::memory_order_relaxed);
  }
}

// Every thread's requests, in the order they were sent, numbered.
History Merge(std::vector<Worker>& workers) {
  History h;
  for (Worker& w : workers) std::move(w.history.begin(), w.history.end(), std::back_inserter(h));
  std::stable_sort(h.begin(), h.end(), [](const HistoryEvent& a, const HistoryEvent& b) {
    return a.invoke != b.invoke ? a.invoke < b.invoke : a.node < b.node;
  });
  for (size_t i = 0; i < h.size(); ++i) h[i].id = static_cast<int64_t>(i);
  return h;
}

std::string Millis(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double, std::milli>(d).count());
  return buf;
}

// "13:04:05.123456789  #17 thread 2 admitted, answered +0.204ms: HGETALL +0.101ms, HSET +0.180ms"
std::string DescribeStressEvent(const HistoryEvent& e) {
  std::string out = FormatInstant(e.invoke) + "  #" + std::to_string(e.id) + " thread " +
                    std::to_string(e.node) + " " +
                    (e.admitted() ? "admitted"
                     : e.denied() ? "denied"
                                  : "no answer") +
                    ", answered +" + Millis(e.complete - e.invoke) + "ms";
  for (size_t i = 0; i < e.steps.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + e.steps[i].label.substr(0, e.steps[i].label.find(' ')) + " +" +
           Millis(e.steps[i].at - e.invoke) + "ms";
  }
  return out;
}

// The key whose admissions come nearest to (or beyond) the most the promise allows over the run.
struct Busiest {
  std::string key;
  int64_t admitted = 0;
  int64_t allowed = 0;
};

Busiest BusiestKey(const History& h, const Policy& policy) {
  struct Span {
    Instant from = Instant::max(), to = Instant::min();
    int64_t admitted = 0;
  };
  std::map<std::string, Span> keys;
  for (const HistoryEvent& e : h) {
    Span& s = keys[e.key];
    s.from = std::min(s.from, e.invoke);
    s.to = std::max(s.to, e.complete);
    if (e.admitted()) s.admitted += e.cost;
  }
  Busiest best;
  double best_ratio = -1;
  for (const auto& [key, s] : keys) {
    const int64_t allowed = MostAdmittedBetween(policy, s.from, s.to);
    const double ratio = static_cast<double>(s.admitted) / static_cast<double>(allowed);
    if (ratio > best_ratio) {
      best_ratio = ratio;
      best = {key, s.admitted, allowed};
    }
  }
  return best;
}

nlohmann::json WitnessJson(const HistoryEvent& e) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepRecord& s : e.steps)
    steps.push_back({{"label", s.label}, {"at", FormatInstant(s.at)}});
  return {{"id", e.id},
          {"key", e.key},
          {"thread", e.node},
          {"sent", FormatInstant(e.invoke)},
          {"answered", FormatInstant(e.complete)},
          {"outcome", e.admitted() ? "admitted" : "denied"},
          {"steps", steps}};
}

// Checks the options and says what to run, or writes why not to `err`.
std::optional<Plan> MakePlan(const StressOptions& o, std::ostream& err) {
  auto refuse = [&](const std::string& why) {
    err << "ratelab stress: " << why << "\n";
    return std::nullopt;
  };
  Plan plan;
  if (o.script.lua && !o.protocol.empty()) return refuse("give a protocol or --lua, not both");
  if (o.script.lua) {
    Result<std::shared_ptr<const LimiterSpec::Custom>> custom = LoadUserScript(o.script);
    if (!custom.ok()) return refuse(std::string(custom.status().message()));
    plan.custom = *std::move(custom);
    plan.protocol = "lua:" + *o.script.lua;
    plan.info = &plan.custom->info;
  } else if (o.protocol.empty()) {
    return refuse("name a kv protocol (see ratelab list protocols) or give --lua FILE");
  } else if (o.script.DescribesAScript()) {
    return refuse("--model, --keys, --args and --reply describe a --lua script");
  } else {
    plan.protocol = o.protocol;
    plan.info = FindProtocol(o.protocol);
    if (plan.info == nullptr) {
      return refuse("unknown protocol '" + o.protocol + "' (see ratelab list protocols)");
    }
  }
  if (plan.info->store != "kv") {
    return refuse(o.protocol + " keeps its state in " + std::string(plan.info->store) +
                  ": stress runs the kv protocols on a real Redis (ratelab list protocols)");
  }
  Result<Policy> policy =
      PolicyFromFlags(plan.protocol, plan.info->algorithm, o.policy, kStressPolicyDefaults);
  if (!policy.ok()) return refuse(std::string(policy.status().message()));
  if (Status s = plan.custom ? absl::OkStatus() : CheckProtocol(o.protocol, *policy); !s.ok()) {
    return refuse(std::string(s.message()));
  }
  plan.policy = *policy;
  if (policy->algorithm == Algorithm::kAnchoredWindow) {
    return refuse("the anchored window cannot be judged on a wall-clock history");
  }
  if (o.threads < 1 || o.threads > 256) return refuse("--threads must be between 1 and 256");
  plan.threads = o.threads;
  const std::optional<Duration> duration = ParseDuration(o.duration);
  if (!duration || *duration <= Duration(0) || *duration > std::chrono::hours(1)) {
    return refuse("--duration '" + o.duration +
                  "' is not a duration above 0 and at most 1h (e.g. 3s, 1m)");
  }
  plan.duration = *duration;
  if (o.users < 1 || o.users > 1'000'000) return refuse("--users must be between 1 and 1000000");
  for (int k = 1; k <= o.users; ++k) plan.users.push_back("s" + std::to_string(k));
  return plan;
}

}  // namespace

int StressCommand(const StressOptions& o, std::ostream& out, std::ostream& err) {
  std::optional<Plan> plan = MakePlan(o, err);
  if (!plan) return kExitBadInput;

  // The store: a private server for the run, or the given one (which must be empty).
  std::unique_ptr<RedisServer> private_server;
  std::string where = o.store;
  if (o.store == "redis") {
    Result<std::unique_ptr<RedisServer>> server = RedisServer::Start({});
    if (!server.ok()) {
      err << "ratelab stress: --store redis: " << server.status().message() << "\n";
      return kExitBadInput;
    }
    private_server = *std::move(server);
    plan->url = private_server->url();
    where = "a private redis-server";
  } else if (o.store == "memory") {
    err << "ratelab stress: --store memory: MemoryKv is a single-threaded simulation; stress "
           "needs a real Redis (--store redis, or its URL)\n";
    return kExitBadInput;
  } else {
    plan->url = o.store;
  }
  Result<std::unique_ptr<Kv>> admin = OpenRedisUrl(plan->url);
  if (!admin.ok()) {
    err << "ratelab stress: --store: " << admin.status().message() << "\n";
    return kExitBadInput;
  }
  if (Status s = RequireEmptyDatabase(**admin, plan->url); !s.ok()) {
    err << "ratelab stress: " << s.message() << "\n";
    return kExitBadInput;
  }

  const SystemClock clock;
  std::vector<Worker> workers(static_cast<size_t>(plan->threads));
  std::atomic<int64_t> answered = 0;
  std::atomic<int> running = plan->threads;
  const Instant start = clock.Now();
  const Instant deadline = start + plan->duration;
  err << "stress " << plan->protocol << " (" << plan->policy.ToString() << ") on " << where << ": "
      << plan->threads << " threads, " << plan->users.size() << " user(s), "
      << FormatDuration(plan->duration) << "\n";
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < plan->threads; ++t) {
      threads.emplace_back(Work, std::cref(*plan), t, deadline, std::cref(clock),
                           std::ref(answered), std::ref(running),
                           std::ref(workers[static_cast<size_t>(t)]));
    }
    // A progress line a second while they run (they stop on their own).
    Instant next = start + std::chrono::seconds(1);
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (clock.Now() >= next && running.load() > 0) {
        err << "progress: " << FormatDuration(next - start) << ", " << answered.load()
            << " answered\n";
        next += std::chrono::seconds(1);
      }
    }
  }
  const Duration elapsed = clock.Now() - start;  // the duration, or less if stopped early
  if (answered.load() >= kMaxRequests) {
    err << "note: stopped after " << kMaxRequests
        << " requests, the most a run records; give a shorter --duration\n";
  }
  (void)(*admin)->Execute(std::vector<std::string>{"FLUSHDB"});

  for (const Worker& w : workers) {
    if (!w.failure.ok()) {
      err << "ratelab stress: the store failed, so the history is incomplete: "
          << w.failure.message() << "\n";
      return kExitBadInput;
    }
  }
  const History history = Merge(workers);
  // Judged as the protocol sees time (the Lua scripts take whole milliseconds or microseconds);
  // the witnesses show the events as they were.
  const Duration resolution = plan->info->time_resolution;
  const History judged = AtResolution(history, resolution);
  // Racing over-admission shows within a few bucket sizes: spans up to 2B (at least 64)
  // emission intervals are searched, which keeps the search near linear in the admissions.
  const Duration horizon = std::max<int64_t>(64, 2 * plan->policy.limit) * plan->policy.window;
  std::vector<Violation> violations = *CheckPromiseOverIntervals(judged, plan->policy, horizon);
  for (Violation& v : violations) {
    for (HistoryEvent& e : v.witness) e = history[static_cast<size_t>(e.id)];
    if (resolution > Duration(1))
      v.summary += " (times to the protocol's " + FormatDuration(resolution) + ")";
  }

  int64_t admitted = 0, denied = 0;
  std::vector<Duration> latencies;
  for (const HistoryEvent& e : history) {
    admitted += e.admitted() ? 1 : 0;
    denied += e.denied() ? 1 : 0;
    latencies.push_back(e.complete - e.invoke);
  }
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&](size_t p) {
    return latencies.empty() ? Duration(0) : latencies[(latencies.size() - 1) * p / 100];
  };
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const Busiest busiest = BusiestKey(judged, plan->policy);
  const std::string promise(PromiseInvariant(plan->policy.algorithm));

  if (o.json) {
    nlohmann::json v = nlohmann::json::array();
    for (const Violation& x : violations) {
      nlohmann::json witness = nlohmann::json::array();
      for (const HistoryEvent& e : x.witness) witness.push_back(WitnessJson(e));
      v.push_back({{"invariant", x.invariant},
                   {"key", x.key},
                   {"summary", x.summary},
                   {"witness", witness}});
    }
    nlohmann::json j = {
        {"protocol", plan->protocol},
        {"store", o.store},
        {"policy", plan->policy.ToString()},
        {"threads", plan->threads},
        {"users", plan->users.size()},
        {"duration_s", seconds},
        {"answered", history.size()},
        {"admitted", admitted},
        {"denied", denied},
        {"per_second", static_cast<double>(history.size()) / seconds},
        {"latency_ms",
         {{"p50", std::chrono::duration<double, std::milli>(percentile(50)).count()},
          {"p99", std::chrono::duration<double, std::milli>(percentile(99)).count()}}},
        {"busiest_key",
         {{"key", busiest.key}, {"admitted", busiest.admitted}, {"allowed", busiest.allowed}}},
        {"checks", {{{"name", promise}, {"violations", violations.size()}}}},
        {"violations", v}};
    out << j.dump(2) << "\n";
  } else {
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.0f", static_cast<double>(history.size()) / seconds);
    out << "answered   " << history.size() << " (" << rate << "/s): " << admitted << " admitted, "
        << denied << " denied\n";
    out << "latency    p50 " << Millis(percentile(50)) << " ms, p99 " << Millis(percentile(99))
        << " ms, from sent to answered\n";
    if (!busiest.key.empty()) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f",
                    static_cast<double>(busiest.admitted) / static_cast<double>(busiest.allowed));
      out << "busiest    " << busiest.key << ": " << busiest.admitted
          << " admitted; the promise allows at most " << busiest.allowed << " over the run ("
          << ratio << "x)\n";
    }
    out << promise << ": " << (violations.empty() ? "kept" : "BROKEN") << "\n";
    for (const Violation& x : violations) {
      out << "  [" << x.invariant << "] " << x.key << ": " << x.summary << "\n";
      for (size_t i = 0; i < x.witness.size() && i < kWitnessLinesShown; ++i) {
        out << "    " << DescribeStressEvent(x.witness[i]) << "\n";
      }
      if (x.witness.size() > kWitnessLinesShown) {
        out << "    ... and " << x.witness.size() - kWitnessLinesShown << " more\n";
      }
    }
    out << "judged on [sent, answered] of each request: only what breaks the promise wherever "
           "each decision fell. False denials and Retry-After are not judged here (they need "
           "the store's order of steps: see ratelab check).\n";
  }
  return violations.empty() ? kExitOk : kExitViolation;
}

}  // namespace ratelab
