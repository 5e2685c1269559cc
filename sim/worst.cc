#include "sim/worst.h"

#include <algorithm>
#include <array>

#include "judge/oracles.h"
#include "model/named.h"
#include "sim/random.h"

namespace ratelab {

namespace {

// The search's own stream, apart from the streams Draw and the runs take from their seeds.
constexpr uint64_t kClimbStream = 0x776f727374;

// The most requests in flight at once in `h` (sent and not yet answered; one never answered is in
// flight until its last step).
int64_t MostInFlight(const History& h) {
  std::vector<std::pair<Instant, int>> edges;  // +1 when sent, -1 when done; ends first at a tie
  edges.reserve(2 * h.size());
  for (const HistoryEvent& e : h) {
    const Instant end = e.decision || e.failed() ? e.complete
                        : e.steps.empty()        ? e.invoke
                                                 : e.steps.back().at;
    edges.push_back({e.invoke, 1});
    edges.push_back({std::max(end, e.invoke), -1});
  }
  std::sort(edges.begin(), edges.end());
  int64_t now = 0, most = 0;
  for (const auto& [at, delta] : edges) most = std::max(most, now += delta);
  return most;
}

// The most requests a case may grow to: enough for every window of its span to be full several
// times over.
size_t MostRequests(const Policy& p) { return static_cast<size_t>(40 * p.limit + 200); }

class Climb {
 public:
  Climb(const std::shared_ptr<const ProtocolInfo>& protocol, const WorstOptions& o,
        const WorstProgress& progress)
      : protocol_(protocol),
        o_(o),
        progress_(progress),
        random_(Random(o.seed).Fork(kClimbStream)) {
    resolution_ = protocol->time_resolution;
    clock_ = protocol->clock;
    window_ = o.base.policy.ClaimWindow();
    // Until a case of the concurrency asked is run: none, from which the climb adds requests.
    result_.best = o.base;
    result_.best.checks.clear();
    result_.best.nodes.assign(1, NodeSpec{});
    result_.run_seed = o.seed;
  }

  Result<WorstResult> Run() {
    // The starts: cases drawn as `check` draws them, each run from its own seed.
    for (int i = 0; i < o_.starts && !Done(); ++i) {
      const uint64_t seed = o_.seed + static_cast<uint64_t>(i);
      Case c = Draw(o_.base, seed, o_.faults, 1);
      c.checks.clear();
      if (Status s = Try(std::move(c), seed); !s.ok()) return s;
    }
    // The climb, leaving a quarter of the runs for the shrink.
    const int64_t climb_until = o_.runs - std::min<int64_t>(o_.runs / 4, 1000);
    while (result_.runs < climb_until && !Done()) {
      Case c = result_.best;
      uint64_t seed = result_.run_seed;
      Mutate(c, seed);
      if (Status s = Try(std::move(c), seed); !s.ok()) return s;
    }
    if (Status s = ShrinkBest(); !s.ok()) return s;
    return std::move(result_);
  }

 private:
  bool Done() const { return result_.stopped || result_.failure || result_.runs >= o_.runs; }

  // Runs `c` from `seed`; keeps it when it is at least as bad as the best, with no more requests
  // when only as bad (while nothing is broken, any size: the climb must be free to grow).
  Status Try(Case c, uint64_t seed) {
    Result<CaseRun> run = RunCase(protocol_, c, seed, o_.stores);
    if (!run.ok()) return run.status();
    ++result_.runs;
    if (run->failure) {
      result_.failure = run->failure;
      return absl::OkStatus();
    }
    // More in flight at once than the concurrency asked: not a case of it.
    if (MostInFlight(run->history) > o_.concurrency) return Told();
    const bool retimed = resolution_ > Duration(1) || clock_ == DecisionClock::kStore ||
                         DelaysAdmissions(run->history);
    History decided =
        retimed ? AsDecided(run->history, clock_, resolution_) : std::move(run->history);
    WorstMeasure m = MeasureWorst(decided, o_.base.policy, o_.claim);
    const bool first = result_.found_at_run == 0;
    const bool better = m.value > result_.value;
    if (first || better ||
        (m.value == result_.value &&
         (m.value == 0 || c.arrivals.size() <= result_.best.arrivals.size()))) {
      if (first || better) result_.found_at_run = result_.runs;
      result_.value = m.value;
      result_.allowed = m.allowed;
      result_.shown = std::move(m.shown);
      result_.best = std::move(c);
      result_.run_seed = seed;
      result_.history = std::move(decided);
    }
    return Told();
  }

  // Tells the progress callback of a run.
  Status Told() {
    if (progress_ && !progress_(result_.runs, result_.value)) result_.stopped = true;
    return absl::OkStatus();
  }

  // An instant in the case's span (its first three windows, and one more).
  Instant AnyTime() { return o_.base.start + Duration(random_.Uniform(0, (4 * window_).count())); }
  // Just before or at an edge of the aligned windows in the span.
  Instant NearAnEdge() {
    const int64_t w = window_.count();
    const int64_t from = ToUnixNanos(o_.base.start);
    const int64_t edge = (from / w + random_.Uniform(1, 4)) * w;
    return FromUnixNanos(edge - random_.Uniform(0, std::max<int64_t>(1, w / 20)));
  }
  Duration Resolution() const { return std::max(resolution_, Duration(1)); }

  std::string AnyUser(const Case& c) {
    if (c.arrivals.empty()) return "u1";
    return c
        .arrivals[static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(c.arrivals.size())))]
        .user;
  }

  void Add(Case& c, Instant at, const std::string& user) {
    if (c.arrivals.size() >= MostRequests(o_.base.policy)) return;
    Arrival a;
    a.at = std::max(at, o_.base.start);
    a.user = user;
    a.stream = ++last_stream_;
    c.arrivals.push_back(std::move(a));
  }

  void Mutate(Case& c, uint64_t& seed) {
    for (const Arrival& a : c.arrivals) last_stream_ = std::max(last_stream_, a.stream);
    const int64_t n = c.policy.limit;
    const int64_t w = window_.count();
    const auto pick = [&] {
      return static_cast<size_t>(random_.Uniform(0, static_cast<int64_t>(c.arrivals.size())));
    };
    const bool interleaves = o_.concurrency > 1 || !c.faults.empty();
    // Requests at one instant or closer than a store's round trip are in flight together: only
    // as many as the concurrency.
    const int64_t most_together = std::min<int64_t>(n + 1, o_.concurrency);
    switch (random_.Uniform(0, interleaves ? 9 : 8)) {
      case 0:  // move one request a little
        if (!c.arrivals.empty()) {
          Arrival& a = c.arrivals[pick()];
          a.at = std::max(o_.base.start, a.at + Duration(random_.Uniform(-w / 20, w / 20 + 1)));
        }
        break;
      case 1:  // move one request anywhere
        if (!c.arrivals.empty()) c.arrivals[pick()].at = AnyTime();
        break;
      case 2:  // take one away
        if (!c.arrivals.empty())
          c.arrivals.erase(c.arrivals.begin() + static_cast<int64_t>(pick()));
        break;
      case 3: {  // add one, its user drawn before its time (the order one compiler gave them as
                 // arguments, whose order another may reverse: drawn apart, every build the same)
        const std::string user = AnyUser(c);
        Add(c, AnyTime(), user);
        break;
      }
      case 4: {  // a burst, at a random time or just before an edge
        const Instant at = random_.Chance(0.5) ? NearAnEdge() : AnyTime();
        const std::string user = AnyUser(c);
        for (int64_t i = random_.Uniform(1, most_together + 1); i > 0; --i) Add(c, at, user);
        break;
      }
      case 5: {  // a dense stream over a span: one request at every step
        const Instant from = random_.Chance(0.5) ? NearAnEdge() : AnyTime();
        const Duration length(random_.Uniform(1, w + 1));
        const Duration step =
            std::max(Resolution(), Duration(random_.Uniform(1, std::max<int64_t>(2, w / n))));
        const std::string user = AnyUser(c);
        for (Instant t = from; t < from + length; t += step) Add(c, t, user);
        break;
      }
      case 6: {  // a quiet span
        const Instant from = AnyTime();
        const Instant to = from + Duration(random_.Uniform(1, w + 1));
        std::erase_if(c.arrivals, [&](const Arrival& a) { return a.at >= from && a.at < to; });
        break;
      }
      case 7: {  // everything after an instant, later or earlier
        const Instant from = AnyTime();
        const Duration by(random_.Uniform(-w / 4, w / 4 + 1));
        for (Arrival& a : c.arrivals) {
          if (a.at >= from) a.at = std::max(o_.base.start, a.at + by);
        }
        break;
      }
      default:  // another interleaving of the same traffic
        seed = random_.Next();
        break;
    }
    std::stable_sort(c.arrivals.begin(), c.arrivals.end(),
                     [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  }

  // Takes requests away from the best case while it is as bad, with the runs left.
  Status ShrinkBest() {
    if (result_.value == 0 || result_.failure) return absl::OkStatus();
    Status failed;
    Case c = result_.best;
    TakeAwayRequests(c, [&](const Case& candidate) {
      if (!failed.ok() || Done()) return false;
      const size_t before = result_.best.arrivals.size();
      failed = Try(candidate, result_.run_seed);
      // Kept (as the best) only when as bad, or worse, with fewer requests.
      return failed.ok() && result_.best.arrivals.size() < before;
    });
    return failed;
  }

  const std::shared_ptr<const ProtocolInfo>& protocol_;
  const WorstOptions& o_;
  const WorstProgress& progress_;
  Random random_;
  Duration resolution_{};
  DecisionClock clock_ = DecisionClock::kClient;
  Duration window_{};
  uint64_t last_stream_ = 0;
  WorstResult result_;
};

}  // namespace

Result<CheckId> ParseWorstClaim(std::string_view text) {
  if (const std::optional<CheckId> measure = CheckNamed(text, kWorstMeasures)) return *measure;
  return absl::InvalidArgumentError("unknown claim '" + std::string(text) + "' (expected " +
                                    CheckChoices(kWorstMeasures) + ")");
}

CheckId DefaultWorstClaim(const Policy& policy) {
  return policy.IsBucket() ? CheckId::kOverBucket : CheckId::kMostInWindow;
}

WorstMeasure MeasureWorst(const History& decided, const Policy& policy, CheckId claim) {
  WorstMeasure m;
  // The span a witness covers, "[00:00:13.273, 00:00:22.598] (span 9.325s)", and its units.
  const auto span_of = [](const Violation& v) {
    const Instant from = v.witness.front().invoke, to = v.witness.back().invoke;
    return std::pair{to - from, "[" + FormatInstantTo(from, 3) + ", " + FormatInstantTo(to, 3) +
                                    "] (span " + FormatDurationTo(to - from, 3) + ")"};
  };
  const auto units = [](const Violation& v) {
    int64_t n = 0;
    for (const HistoryEvent& e : v.witness) n += e.admitted() ? e.cost : 0;
    return n;
  };
  switch (claim) {
    case CheckId::kMostInWindow: {
      const Duration w = policy.ClaimWindow();
      m.value = CheckAnyWindowCap(decided, policy.limit, w).max_in_any_window;
      m.allowed = policy.limit;
      if (m.value == 0) break;
      // The span holding the most: the one that breaks a cap of one less.
      std::vector<Violation> v = CheckAnyWindowCap(decided, m.value - 1, w).violations;
      if (v.empty()) break;
      m.shown = std::move(v.front());
      m.shown->invariant = CheckId::kMostInWindow;
      SetGrid(*m.shown, policy);
      m.shown->summary = std::to_string(units(*m.shown)) + " admitted in " +
                         span_of(*m.shown).second + ", " + std::to_string(policy.limit) +
                         " allowed in any " + FormatDuration(w);
      break;
    }
    case CheckId::kOverBucket: {
      m.value = MostOverBucket(decided, policy.limit, policy.window, CreditOf(policy));
      m.allowed = policy.limit;
      if (m.value == 0) break;
      // The span over by the most: the one that breaks a burst that much less one larger.
      std::vector<Violation> v = CheckBucketConformance(decided, policy.limit + m.value - 1,
                                                        policy.window, CreditOf(policy));
      if (v.empty()) break;
      m.shown = std::move(v.front());
      m.shown->invariant = CheckId::kOverBucket;
      m.shown->bucket = Violation::Bucket{policy.limit, policy.window};  // the one it overdrew
      const auto [span, text] = span_of(*m.shown);
      m.allowed = policy.limit + span / policy.window;
      m.shown->summary = std::to_string(units(*m.shown)) + " admitted in " + text + ", " +
                         std::to_string(m.value) + " over the bucket's " +
                         std::to_string(policy.limit) + " + " +
                         std::to_string(span / policy.window) + " = " + std::to_string(m.allowed);
      break;
    }
    case CheckId::kFalseDenialStreak:
      m.shown = LongestFalseDenialStreak(decided, policy);
      m.value = m.shown ? static_cast<int64_t>(m.shown->witness.size()) : 0;
      break;
    default:  // not a measure (kWorstMeasures): nothing measured
      break;
  }
  return m;
}

Result<WorstResult> SearchWorst(const std::shared_ptr<const ProtocolInfo>& protocol,
                                const WorstOptions& options, const WorstProgress& progress) {
  if (Status s = TryOnItsStore(protocol, options.stores, options.base.policy, options.base.start);
      !s.ok())
    return s;
  if (Status s = TryProcessOnce(*protocol, options.base.policy, options.base.start); !s.ok()) {
    return s;
  }
  return Climb(protocol, options, progress).Run();
}

}  // namespace ratelab
