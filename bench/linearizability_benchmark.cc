// Keys and calls a second of the linearizability search (judge/linearizability.h) on a
// 100 000-call concurrent history, beside its peer: the same calls replayed once, in the order
// they were sent, through the sequential reference model (the bare loop a check without
// concurrency would be). The table printed last reads each as a ratio to that peer.
//
// The history: `keys` keys with 100 000 / keys calls each, sent by 8 clients at random over a
// few seconds, each answered after 0 to 3 ms, decided by the model at a random instant of its
// interval (so the history is linearizable, and the search must find an order for every key);
// "one key broken" flips one answer of one key, so that key's search must exhaust its states.
// Then the histories the commands make (BM_ShapedSearch, beside BM_ShapedReplay): a minute's
// probe on a nanosecond server clock (the anchored window, the sliding log and both buckets), a
// 16-thread stress run on one key (both buckets and the sliding log), and a probe whose first 32
// requests race to open a bucket (both buckets).
//
// Run: build/bench/linearizability_benchmark
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "judge/linearizability.h"
#include "model/reference_model.h"
#include "model/sliding_log_model.h"

namespace ratelab {
namespace {

constexpr int64_t kCalls = 100'000;

struct Workload {
  Policy policy;
  History history;
};

// Histories shaped as the commands make them, each judged as its command judges it (on the
// store's clock, the instants following the order of effect):
// - a probe's: 3 users' requests over HTTP, 4 at a time at 100 a second, each answered after 0.3
//   to 1.5 ms, decided on a server clock exact to the nanosecond, each interval widened a
//   millisecond early as the probe widens it (a server may see its own clock's whole
//   millisecond); 2 000 requests a user, a probe of a minute;
// - a stress run's: 16 threads on one key with no pause between calls, each answered after 150 to
//   450 us, at `stress`'s default policies, each decided as its script decides, at the instant
//   its client read as it sent it, the store taking the calls in the order of a random instant of
//   each interval: the token bucket (10, filling at 100 a second) in milliseconds
//   (kv-token-bucket-lua), GCRA in microseconds (kv-gcra-lua), and the sliding log (100 a
//   second) in milliseconds (kv-sliding-log-lua, a sorted set: a window's whole allowance
//   admitted in a few milliseconds, some after a call that read a later millisecond); 150 000
//   calls, what `stress --threads 16 --duration 4s --users 2` sends a key, judged as `stress`
//   judges it.
// - a probe's race: one user, 32 connections at 10 000 requests a second, whose first requests
//   wait 150 ms together (a store paused) and open a full bucket of 5, one per 10 ms, at any
//   nanosecond of that wait; 5 000 requests, on the server's clock as the probe judges it.
struct Judged {
  Policy policy;
  int64_t resolution_ns;
  bool store_clock;
  // On the client's clock: whether each call is decided at the instant its client read as it
  // sent it (as `stress` sends a script its now), the store taking the calls in the order of a
  // random instant of each interval, so that a call that read an earlier instant can be taken
  // after one that read a later; otherwise at that random instant itself.
  bool read_at_send = false;
  // A sliding log kept as a sorted set (SlidingLogSortedModel) decides the calls, not the model.
  bool sorted_set = false;
};
struct Shape {
  const char* name;
  int64_t keys;
  int64_t per_key;
  int clients;
  int64_t gap_ns;  // a client's pause after an answer, at most
  int64_t latency_min_ns;
  int64_t latency_max_ns;
  int64_t early_ns;  // how much earlier than sent an interval is judged from
  std::vector<Judged> policies;
  int64_t first_latency_ns = 0;  // when not 0: how long each client's first call is answered after
};
const Shape kShapes[] = {
    {"probe",
     3,
     2'000,
     4,
     40'000'000,
     300'000,
     1'500'000,
     999'999,
     {{Policy::Window(Algorithm::kAnchoredWindow, 5, std::chrono::seconds(1)), 1, true},
      {Policy::Window(Algorithm::kSlidingLog, 5, std::chrono::seconds(1)), 1, true},
      {Policy::Bucket(Algorithm::kTokenBucket, 5, std::chrono::milliseconds(200)), 1, true},
      {Policy::Bucket(Algorithm::kGcra, 5, std::chrono::milliseconds(200)), 1, true}}},
    {"stress 16 threads",
     1,
     150'000,
     16,
     0,
     150'000,
     450'000,
     0,
     {{Policy::Bucket(Algorithm::kTokenBucket, 10, std::chrono::milliseconds(10)), 1'000'000, false,
       true},
      {Policy::Bucket(Algorithm::kGcra, 10, std::chrono::milliseconds(10)), 1'000, false, true},
      {Policy::Window(Algorithm::kSlidingLog, 100, std::chrono::seconds(1)), 1'000'000, false, true,
       true}}},
    {"probe, a 32-way race",
     1,
     5'000,
     32,
     3'200'000,
     300'000,
     1'500'000,
     999'999,
     {{Policy::Bucket(Algorithm::kTokenBucket, 5, std::chrono::milliseconds(10)), 1, true},
      {Policy::Bucket(Algorithm::kGcra, 5, std::chrono::milliseconds(10)), 1, true}},
     150'000'000},
};

// `shape`'s calls, decided by `judged`'s model at a random instant of each interval seen at its
// clock's resolution (so that the history is linearizable); each key's clients send their next
// call a random gap after their last was answered.
Workload MakeShapedWorkload(const Shape& shape, const Judged& judged, uint64_t seed) {
  const Policy& policy = judged.policy;
  std::mt19937_64 rng(seed);
  Workload w{policy, {}};
  std::unique_ptr<ReferenceModel> model =
      judged.sorted_set ? std::make_unique<internal::PerKeyModel<SlidingLogSortedModel>>(policy)
                        : MakeReferenceModel(policy);
  std::uniform_int_distribution<int64_t> gap(0, shape.gap_ns),
      latency(shape.latency_min_ns, shape.latency_max_ns);
  const Instant start = FromUnixNanos(int64_t{1'700'000'000} * 1'000'000'000);
  for (int64_t k = 0; k < shape.keys; ++k) {
    const std::string key = "user:" + std::to_string(k);
    std::vector<Instant> free(static_cast<size_t>(shape.clients), start);
    std::vector<std::pair<Instant, size_t>> effects;
    for (int64_t i = 0; i < shape.per_key; ++i) {
      auto client = std::min_element(free.begin(), free.end());
      HistoryEvent e;
      e.id = static_cast<int64_t>(w.history.size());
      e.key = key;
      e.invoke = *client + Duration(gap(rng));
      e.complete = e.invoke + Duration(i < shape.clients && shape.first_latency_ns > 0
                                           ? shape.first_latency_ns
                                           : latency(rng));
      *client = e.complete;
      const int64_t span = (e.complete - e.invoke).count();
      effects.push_back({e.invoke + Duration(std::uniform_int_distribution<int64_t>(0, span)(rng)),
                         w.history.size()});
      e.invoke -= Duration(shape.early_ns);
      w.history.push_back(std::move(e));
    }
    std::sort(effects.begin(), effects.end());
    for (const auto& [at, i] : effects) {
      const int64_t ns =
          (judged.read_at_send ? w.history[i].invoke : at).time_since_epoch().count();
      w.history[i].decision =
          model->Decide(key, FromUnixNanos(ns / judged.resolution_ns * judged.resolution_ns), 1);
    }
  }
  return w;
}

// 100 000 calls over `keys` keys, eight clients a key, each answered after 0 to 3 ms, decided on
// the store's clock at 1 ms; "broken" flips one answer of the first key.
Workload MakeWorkload(const Policy& policy, int64_t keys, bool broken) {
  const Shape shape{"", keys, kCalls / keys, 8, 4'000'000, 0, 3'000'000, 0, {}};
  Workload w = MakeShapedWorkload(shape, Judged{policy, 1'000'000, true},
                                  static_cast<uint64_t>(keys) * 31 + (broken ? 1 : 0));
  if (broken) {
    Decision& d = *w.history[static_cast<size_t>(shape.per_key / 2)].decision;
    d.allowed = !d.allowed;
  }
  return w;
}

const Policy kPolicies[] = {
    Policy::Window(Algorithm::kFixedWindow, 10, std::chrono::seconds(1)),
    Policy::Window(Algorithm::kSlidingLog, 10, std::chrono::seconds(1)),
    Policy::Bucket(Algorithm::kTokenBucket, 10, std::chrono::milliseconds(100)),
};

void BM_Search(benchmark::State& state) {
  const Policy& policy = kPolicies[state.range(0)];
  const int64_t keys = state.range(1);
  const bool broken = state.range(2) != 0;
  const Workload w = MakeWorkload(policy, keys, broken);
  LinearizabilityOptions options;
  options.resolution = std::chrono::milliseconds(1);
  options.max_states = 50'000'000;
  HistoryLinearizability r;
  for (auto _ : state) {
    r = CheckHistoryLinearizable(w.policy, w.history, options);
    benchmark::DoNotOptimize(r);
  }
  const LinearVerdict want =
      broken ? LinearVerdict::kNotLinearizable : LinearVerdict::kLinearizable;
  if (r.verdict != want) {
    state.SkipWithError(("the search found the history " +
                         std::string(LinearVerdictName(r.verdict)) + " after " +
                         std::to_string(r.states) + " states")
                            .c_str());
  }
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(kCalls),
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["keys/s"] =
      benchmark::Counter(static_cast<double>(keys), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["states"] = static_cast<double>(r.states);
  state.SetLabel(policy.ToString() + (broken ? ", one key broken" : ""));
}

void BM_Replay(benchmark::State& state) {
  const Policy& policy = kPolicies[state.range(0)];
  const Workload w = MakeWorkload(policy, state.range(1), false);
  std::vector<const HistoryEvent*> sent;
  for (const HistoryEvent& e : w.history) sent.push_back(&e);
  std::stable_sort(sent.begin(), sent.end(), [](const HistoryEvent* a, const HistoryEvent* b) {
    return a->invoke < b->invoke;
  });
  for (auto _ : state) {
    std::unique_ptr<ReferenceModel> model = MakeReferenceModel(policy);
    int64_t allowed = 0;
    for (const HistoryEvent* e : sent) allowed += model->Decide(e->key, e->invoke, 1).allowed;
    benchmark::DoNotOptimize(allowed);
  }
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(kCalls),
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(policy.ToString() + ", replayed once");
}

void BM_ShapedSearch(benchmark::State& state) {
  const Shape& shape = kShapes[state.range(0)];
  const Judged& judged = shape.policies[state.range(1)];
  const Policy& policy = judged.policy;
  const Workload w = MakeShapedWorkload(shape, judged, static_cast<uint64_t>(shape.per_key));
  LinearizabilityOptions options;  // the budget the commands give
  options.resolution = Duration(judged.resolution_ns);
  options.instants_follow_order = judged.store_clock;
  options.read_at_send = judged.read_at_send;
  HistoryLinearizability r;
  for (auto _ : state) {
    r = CheckHistoryLinearizable(w.policy, w.history, options);
    benchmark::DoNotOptimize(r);
  }
  if (r.verdict != LinearVerdict::kLinearizable) {
    state.SkipWithError(("the search found the history " +
                         std::string(LinearVerdictName(r.verdict)) + " after " +
                         std::to_string(r.states) + " states")
                            .c_str());
  }
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(w.history.size()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["states"] = static_cast<double>(r.states);
  state.SetLabel(std::string(shape.name) + ", " + policy.ToString());
}

void BM_ShapedReplay(benchmark::State& state) {
  const Shape& shape = kShapes[state.range(0)];
  const Workload w = MakeShapedWorkload(shape, shape.policies[state.range(1)],
                                        static_cast<uint64_t>(shape.per_key));
  for (auto _ : state) {
    std::unique_ptr<ReferenceModel> model = MakeReferenceModel(w.policy);
    int64_t allowed = 0;
    for (const HistoryEvent& e : w.history) allowed += model->Decide(e.key, e.invoke, 1).allowed;
    benchmark::DoNotOptimize(allowed);
  }
  state.counters["calls/s"] = benchmark::Counter(static_cast<double>(w.history.size()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void ShapedArguments(benchmark::internal::Benchmark* b) {
  for (int shape = 0; shape < static_cast<int>(std::size(kShapes)); ++shape) {
    for (size_t p = 0; p < kShapes[shape].policies.size(); ++p) {
      b->Args({shape, static_cast<int64_t>(p)});
    }
  }
  b->Unit(benchmark::kMillisecond);
}

void Arguments(benchmark::internal::Benchmark* b, bool with_broken) {
  for (int p = 0; p < 3; ++p) {
    for (const int keys : {100, 10'000}) {
      b->Args({p, keys, 0});
      if (with_broken) b->Args({p, keys, 1});
    }
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Replay)->Apply([](benchmark::internal::Benchmark* b) { Arguments(b, false); });
BENCHMARK(BM_Search)->Apply([](benchmark::internal::Benchmark* b) { Arguments(b, true); });
BENCHMARK(BM_ShapedReplay)->Apply(ShapedArguments);
BENCHMARK(BM_ShapedSearch)->Apply(ShapedArguments);

// Keeps each run's time, to print the ratios once all have run.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) results_[r.benchmark_name()] = r.GetAdjustedRealTime();
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nsearch time over the bare replay's (same policy and keys):\n");
    for (const auto& [name, time] : results_) {
      std::string replay;
      if (name.rfind("BM_Search/", 0) == 0) {
        // BM_Search/P/K/B -> BM_Replay/P/K/0
        replay = "BM_Replay/" + name.substr(10);
        replay = replay.substr(0, replay.rfind('/')) + "/0";
      } else if (name.rfind("BM_ShapedSearch/", 0) == 0) {
        replay = "BM_ShapedReplay/" + name.substr(16);
      } else {
        continue;
      }
      const auto it = results_.find(replay);
      if (it == results_.end()) continue;
      std::printf("  %-32s %8.1fx\n", name.c_str(), time / it->second);
    }
  }

 private:
  std::map<std::string, double> results_;
};

}  // namespace
}  // namespace ratelab

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ratelab::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
