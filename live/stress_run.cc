#include "live/stress_run.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "impl/drivers/store_drivers.h"
#include "judge/oracles.h"

namespace ratelab {

namespace {

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

// What one thread did: its requests, and what stopped it early, if anything: the store's
// failure, or a request the limiter answered with its own error (kept in the history).
struct Worker {
  History history;
  Status failure;
};

// One limiter process: its own connection to `store` and protocol instance (or, for a user's
// limiter process, `shared`, the one every thread calls), sending until `deadline`, or until the
// run has recorded kStressMaxRequests.
void Work(const StressPlan& plan, const StoreDriver* store, Protocol* shared, int node,
          Instant deadline, const Clock& clock, std::atomic<int64_t>& answered,
          std::atomic<int>& running, const std::atomic<bool>& stopping, Worker& w) {
  struct Done {
    std::atomic<int>& running;
    ~Done() { running.fetch_sub(1); }
  } done{running};
  StoreConnection connection;
  std::unique_ptr<Protocol> own;
  if (shared == nullptr) {
    Result<StoreConnection> connected = store->Connect({});
    if (!connected.ok()) {
      w.failure = connected.status();
      return;
    }
    connection = *std::move(connected);
    Result<std::unique_ptr<Protocol>> made =
        plan.protocol->Instance(plan.policy, {connection.kv, connection.docs, connection.sql});
    if (!made.ok()) {
      w.failure = made.status();
      return;
    }
    own = *std::move(made);
    own->SeedProcess(0x5eed0000 + static_cast<uint64_t>(node));  // its own Math.random
  }
  Protocol* const protocol = shared != nullptr ? shared : own.get();
  RecordingExecutor executor(clock);
  // Each thread's requests numbered apart from every other's: node, node + threads, ...
  for (size_t i = static_cast<size_t>(node), sent = 0;; ++i, ++sent) {
    const Request request{"user", "s" + std::to_string(i % static_cast<size_t>(plan.users) + 1),
                          "/stress", 1, clock.Now()};
    if (request.now >= deadline || answered.load(std::memory_order_relaxed) >= kStressMaxRequests ||
        stopping.load(std::memory_order_relaxed)) {
      return;
    }
    HistoryEvent e;
    e.key = LimiterKey(request);
    e.node = node;
    e.invoke = e.node_now = request.now;
    Context ctx(executor, static_cast<int64_t>(sent * static_cast<size_t>(plan.threads)) + node);
    Task<Result<Decision>> task = protocol->Decide(ctx, request);
    task.Start();
    if (!task.done()) std::terminate();  // every step ran at once
    Result<Decision> decision = std::move(task.result());
    e.complete = e.apply = clock.Now();  // where in between it took effect, no one knows
    e.steps = executor.TakeSteps();
    if (!decision.ok() && IsStoreFailure(decision.status())) {
      w.failure = decision.status();
      return;
    }
    if (!decision.ok()) {  // the limiter's own error: a result, and the end of this thread
      e.failure = std::string(decision.status().message());
      w.history.push_back(std::move(e));
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

BusiestKey FindBusiestKey(const History& h, const Policy& policy) {
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
  BusiestKey best;
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

Result<StressResult> RunStoreStress(const StressPlan& plan, const Clock& clock,
                                    const StressProgress& progress, const StressStop& stop);
Result<StressResult> RunProcessStress(const StressPlan& plan, const Clock& clock,
                                      const StressProgress& progress, const StressStop& stop);
// The threads, each connected to `store` (or all calling `shared`), then what they did, judged.
Result<StressResult> RunThreads(const StressPlan& plan, const StoreDriver* store,
                                const Clock& clock, const StressProgress& progress,
                                const StressStop& stop, Protocol* shared = nullptr);

// Where each kind of protocol can keep its state under real threads, for a refusal.
std::string_view StoresFor(StoreKind kind) {
  switch (kind) {
    case StoreKind::kMemory:
      return "in process (--store memory), every thread calling one instance";
    case StoreKind::kKv:
      return "on a Redis (--store redis, or its URL) or on the in-memory store (--store memory)";
    case StoreKind::kDocs:
      return "on the in-memory store's documents (--store memory)";
    case StoreKind::kSql:
      return "on PostgreSQL (--store postgres, or a postgresql:// URL)";
  }
  return "";
}

Status CheckStressStore(const StressPlan& plan) {
  const StoreKind kind = plan.protocol->store;
  Result<std::unique_ptr<StoreDriver>> store = OpenStoreDriver(plan.store);
  if (!store.ok()) {
    return absl::InvalidArgumentError("--store: " + std::string(store.status().message()));
  }
  if ((*store)->Serves(kind)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "--store " + plan.store.ToString() + ": " + plan.protocol->name + " keeps its state in " +
      std::string(StoreKindName(kind)) + ": stress runs it " + std::string(StoresFor(kind)));
}

}  // namespace

Status CheckStressPlan(const StressPlan& plan) {
  const auto refuse = [](const std::string& why) { return absl::InvalidArgumentError(why); };
  if (plan.protocol->IsProcess()) {
    if (plan.store.kind != StoreName::Kind::kMemory) {
      return refuse("--store " + plan.store.ToString() + ": " + plan.protocol->name +
                    " keeps its state in its process, which every thread calls");
    }
  } else if (Status s = CheckStressStore(plan); !s.ok()) {
    return s;
  }
  if (plan.protocol->needs_replica) {
    return refuse(
        plan.protocol->name +
        " waits for a replica (WAIT), and the stores stress runs on have none: its every "
        "admission would fail (check it with `ratelab check`, whose in-memory store models one)");
  }
  if (plan.protocol->delays_admissions) {
    return refuse(plan.protocol->name +
                  " admits with a wait (its reply names wait_*), and stress has no model of a "
                  "delayed admission for linearizability yet: check it with `ratelab check`");
  }
  if (plan.threads < 1 || plan.threads > 256) return refuse("--threads must be between 1 and 256");
  if (plan.duration <= Duration(0) || plan.duration > std::chrono::hours(1)) {
    return refuse("--duration must be above 0 and at most 1h (e.g. 3s, 1m)");
  }
  if (plan.users < 1 || plan.users > 1'000'000) {
    return refuse("--users must be between 1 and 1000000");
  }
  return absl::OkStatus();
}

Result<StressResult> RunStress(const StressPlan& plan, const Clock& clock,
                               const StressProgress& progress, const StressStop& stop) {
  if (Status s = CheckStressPlan(plan); !s.ok()) return s;
  if (plan.protocol->IsProcess()) return RunProcessStress(plan, clock, progress, stop);
  return RunStoreStress(plan, clock, progress, stop);
}

namespace {

// On a real store: a private server for the run, or the given one, which must be empty (a
// Redis database with no key, ratelab's tables with no row), ready; emptied again afterwards.
Result<StressResult> RunStoreStress(const StressPlan& plan, const Clock& clock,
                                    const StressProgress& progress, const StressStop& stop) {
  const auto named = [&plan](const Status& s) {
    return Status(s.code(), "--store " + plan.store.ToString() + ": " + std::string(s.message()));
  };
  Result<std::unique_ptr<StoreDriver>> store = OpenStoreDriver(plan.store, {.clock = &clock});
  if (!store.ok()) return named(store.status());
  if (Status s = (*store)->Start(); !s.ok()) return named(s);
  if (Status s = (*store)->Prepare(true); !s.ok()) return named(s);
  // A script that cannot answer one request on this store is bad input, not a stress result.
  Result<StoreConnection> admin = (*store)->Connect({});
  if (!admin.ok()) return named(admin.status());
  const Status tried = admin->kv != nullptr
                           ? TryOnce(*plan.protocol, *admin->kv, plan.policy, clock.Now())
                           : absl::OkStatus();
  (*store)->Empty();
  if (!tried.ok()) return tried;
  // An in-process protocol keeps its state in its instance: one, which every thread calls.
  std::unique_ptr<Protocol> shared;
  if (plan.protocol->store == StoreKind::kMemory) {
    Result<std::unique_ptr<Protocol>> made =
        plan.protocol->Instance(plan.policy, {admin->kv, admin->docs, admin->sql});
    if (!made.ok()) return made.status();
    shared = *std::move(made);
  }
  Result<StressResult> r = RunThreads(plan, store->get(), clock, progress, stop, shared.get());
  (*store)->Empty();
  return r;
}

// A user's limiter process: one limiter in it, which every thread calls (its messages
// interleaved as the threads send them), deciding at the wall clock's instant as it is sent.
Result<StressResult> RunProcessStress(const StressPlan& plan, const Clock& clock,
                                      const StressProgress& progress, const StressStop& stop) {
  if (Status s = TryProcessOnce(*plan.protocol, plan.policy, clock.Now()); !s.ok()) return s;
  Stores stores;
  stores.clock = &clock;
  Result<std::unique_ptr<Protocol>> shared = plan.protocol->Instance(plan.policy, stores);
  if (!shared.ok()) return shared.status();
  return RunThreads(plan, nullptr, clock, progress, stop, shared->get());
}

Result<StressResult> RunThreads(const StressPlan& plan, const StoreDriver* store,
                                const Clock& clock, const StressProgress& progress,
                                const StressStop& stop, Protocol* shared) {
  StressResult r;
  std::vector<Worker> workers(static_cast<size_t>(plan.threads));
  std::atomic<int64_t> answered = 0;
  std::atomic<int> running = plan.threads;
  std::atomic<bool> stopping = false;
  r.start = clock.Now();
  const Instant deadline = r.start + plan.duration;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < plan.threads; ++t) {
      threads.emplace_back(Work, std::cref(plan), store, shared, t, deadline, std::cref(clock),
                           std::ref(answered), std::ref(running), std::cref(stopping),
                           std::ref(workers[static_cast<size_t>(t)]));
    }
    // A progress report a second while they run (they stop on their own).
    Instant next = r.start + std::chrono::seconds(1);
    while (running.load() > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (stop && !stopping.load() && stop()) {
        stopping = true;
        r.interrupted = true;
      }
      if (clock.Now() >= next && running.load() > 0) {
        if (progress) progress(next - r.start, answered.load());
        next += std::chrono::seconds(1);
      }
    }
  }
  r.elapsed = clock.Now() - r.start;
  r.stopped_at_cap = answered.load() >= kStressMaxRequests;
  for (const Worker& w : workers) {
    if (!w.failure.ok()) {
      return Status(w.failure.code(), "the store failed, so the history is incomplete: " +
                                          std::string(w.failure.message()));
    }
  }

  r.history = Merge(workers);
  std::vector<Duration> latencies;
  for (const HistoryEvent& e : r.history) {
    r.admitted += e.admitted() ? 1 : 0;
    r.denied += e.denied() ? 1 : 0;
    latencies.push_back(e.complete - e.invoke);
  }
  r.latency_p50 = Percentile(latencies, 50);
  r.latency_p99 = Percentile(latencies, 99);
  r.promise = PromiseInvariant(plan.policy.algorithm);
  for (const HistoryEvent& e : r.history) {
    if (e.failed()) {
      r.failure = e;
      return r;  // a limiter that errs is not judged
    }
  }
  r.resolution = plan.protocol->time_resolution;
  // Judged as the protocol sees time (the Lua scripts take whole milliseconds or microseconds).
  const History judged = AtResolution(r.history, r.resolution);
  r.busiest = FindBusiestKey(judged, plan.policy);
  const Duration tie = plan.protocol->tie();
  // Its stores start empty (a given Redis's database must be), so every key is fresh.
  r.violations = JudgePromiseOverIntervals(r.history, judged, plan.policy, tie, true);
  r.false_denials = JudgeFalseDenialsOverIntervals(r.history, judged, plan.policy, r.resolution,
                                                   tie, plan.protocol->clock);
  r.linearizability = JudgeLinearizability(r.history, plan.policy, r.resolution, tie,
                                           plan.protocol->clock, r.violations);
  for (std::vector<Violation>* found : {&r.violations, &r.false_denials}) {
    for (Violation& v : *found) SetGrid(v, plan.policy);
  }
  // Its findings were judged at the times the limiter saw.
  if (r.resolution > Duration(1)) {
    for (std::vector<Violation>* found : {&r.violations, &r.false_denials}) {
      for (Violation& v : *found) {
        v.summary += " (times to the limiter's " + FormatDuration(r.resolution) + ")";
        UncutWindow(v, r.resolution);  // its witness is printed uncut
      }
    }
  }
  return r;
}

}  // namespace

}  // namespace ratelab
