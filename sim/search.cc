#include "sim/search.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "impl/core/clock.h"
#include "impl/limiters/kv_steps.h"
#include "sim/scenario_run.h"
#include "sim/swarm.h"

namespace ratelab {

namespace {

// How far past the seed being read the threads of --jobs may run, a thread: room enough that a
// slow seed holds none of them up, and a bound on the runs held.
constexpr uint64_t kSearchAheadPerJob = 64;
// Seeds a thread takes at once, so that it takes the search's lock once for several.
constexpr uint64_t kSearchSeedsATake = 8;

// The span a case's traffic covers: three windows (a bucket's window: the time to fill it).
Duration Span(const Policy& p) { return 3 * p.ClaimWindow(); }

}  // namespace

Duration DefaultMaxTransit(const Policy& p) {
  const Duration round_trip = 2 * (kSearchLatencyBase + kSearchLatencyJitter);
  return std::max(5 * round_trip, std::min(3 * p.ClaimWindow(), kTransitAllowance / 2));
}

Duration MaxTransitOf(const Case& c) { return c.max_transit.value_or(DefaultMaxTransit(c.policy)); }

Status CheckCaseSize(const Policy& policy, int64_t max_simulated) {
  // Draw's most: two users, each with Poisson arrivals 3N per window over three windows, a
  // burst of N + 1 and a boundary attack of 2N.
  const double n = static_cast<double>(policy.limit);
  const double requests = 2 * (9 * n + (n + 1) + 2 * n);
  if (requests <= static_cast<double>(max_simulated)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "a limit (or burst) of " + std::to_string(policy.limit) + " makes each seed's case about " +
      std::to_string(static_cast<uint64_t>(requests)) + " requests, over --max-simulated " +
      std::to_string(max_simulated) +
      " (each costs about 400 bytes); search a smaller limit (the bugs a limit shows, a smaller "
      "one shows too) or raise --max-simulated");
}

Case Draw(const Case& base, uint64_t seed, const SearchFaults& faults, int concurrency) {
  Random r = Random(seed).Fork(7);
  Case c = base;
  const Instant start = c.start;
  const Policy& p = c.policy;
  const Duration w = p.ClaimWindow();
  const Duration span = Span(p);
  const int users = static_cast<int>(r.Uniform(1, 3));
  for (int u = 1; u <= users; ++u) {
    const std::string user = "u" + std::to_string(u);
    PoissonTraffic(user, start, span, w / (3 * p.limit)).Generate(r, c.arrivals);
    if (r.Chance(0.5)) {
      const Instant at = start + Duration(r.Uniform(0, span.count()));
      BurstTraffic(user, at, p.limit + 1).Generate(r, c.arrivals);
    }
    if (r.Chance(0.5)) {
      const Instant edge = start + w * r.Uniform(1, 3);
      const Duration step = std::max(Duration(1), w / (100 * p.limit));
      BoundaryAttackTraffic(user, edge, p.limit * step, p.limit).Generate(r, c.arrivals);
    }
  }
  std::stable_sort(c.arrivals.begin(), c.arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  // Each request keeps its own random stream however the case is shrunk.
  for (size_t i = 0; i < c.arrivals.size(); ++i) c.arrivals[i].stream = i + 1;
  c.nodes.assign(static_cast<size_t>(concurrency), NodeSpec{});
  if (faults.contains(FaultKind::kClockSkew) && concurrency > 1) {
    c.nodes[1].clock_offset = Duration(r.Uniform(-w.count() / 4, w.count() / 4 + 1));
  }
  c.faults = FaultsNearRequests(r, c.arrivals, start, w, concurrency,
                                2 * (kSearchLatencyBase + kSearchLatencyJitter), faults);
  return c;
}

void AddKeysUsedOnce(Case& c, uint64_t seed) {
  Random once = Random(seed).Fork(11);
  const Duration span = Span(c.policy);
  const uint64_t streams = c.arrivals.size();
  for (uint64_t k = 1; k <= 2; ++k) {
    c.arrivals.push_back({c.start + Duration(once.Uniform(0, span.count())),
                          "once" + std::to_string(k), "/api", 1, streams + k});
  }
  std::stable_sort(c.arrivals.begin(), c.arrivals.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
}

Scenario CaseScenario(const std::shared_ptr<const ProtocolInfo>& protocol, const Case& c) {
  Scenario s;
  s.name = "check " + protocol->name;
  s.start = c.start;
  s.nodes = c.nodes;
  s.to_store = {kSearchLatencyBase, kSearchLatencyJitter};
  s.from_store = s.to_store;
  s.buggify = Scenario::BuggifyMode::kAuto;
  s.buggify_max_delay = MaxTransitOf(c);
  LimiterSpec spec = LimiterOf(protocol, c.policy);
  spec.durability = c.durability;
  s.limiters.push_back(std::move(spec));
  s.claim_limit = c.policy.limit;
  s.claim_window = c.policy.ClaimWindow();
  s.traffic.push_back(std::make_unique<ReplayTraffic>("the case", c.arrivals));
  s.faults = c.faults;
  s.checks = c.checks;
  s.keep_lapses = true;
  return s;
}

Result<CaseRun> RunCase(const std::shared_ptr<const ProtocolInfo>& protocol, const Case& c,
                        uint64_t seed, const std::shared_ptr<StoreSource>& stores) {
  Scenario scenario = CaseScenario(protocol, c);
  scenario.stores = stores;
  if (stores) scenario.store = stores->name();
  Result<RunResult> run = RunScenario(scenario, seed);
  if (!run.ok()) return run.status();
  LimiterOutcome& outcome = run->limiters.front();
  CaseRun out;
  if (const HistoryEvent* failed = outcome.FirstFailure()) out.failure = *failed;
  out.history = std::move(outcome.history);
  out.faults = std::move(run->faults);
  out.lapses = std::move(outcome.lapses);
  for (CheckResult& check : outcome.checks) {
    if (!check.violations.empty()) {
      out.first = std::move(check.violations.front());
      out.first_check = check.check;
      break;
    }
  }
  return out;
}

bool TakeAwayRequests(Case& c, const std::function<bool(const Case&)>& still_fails) {
  bool taken = false;
  for (size_t chunk = std::max<size_t>(1, c.arrivals.size() / 2); chunk >= 1; chunk /= 2) {
    for (size_t at = 0; at < c.arrivals.size();) {
      Case candidate = c;
      const auto first = candidate.arrivals.begin() + static_cast<std::ptrdiff_t>(at);
      candidate.arrivals.erase(
          first, first + static_cast<std::ptrdiff_t>(std::min(chunk, c.arrivals.size() - at)));
      if (!candidate.arrivals.empty() && still_fails(candidate)) {
        c = std::move(candidate);
        taken = true;
      } else {
        at += chunk;
      }
    }
    if (chunk == 1) break;
  }
  return taken;
}

namespace {

// Moves each request it can to its predecessor's instant, the flaw still shown.
bool MoveRequestsTogether(Case& c, const std::function<bool(const Case&)>& still_fails) {
  bool moved = false;
  for (size_t i = 1; i < c.arrivals.size(); ++i) {
    if (c.arrivals[i].at == c.arrivals[i - 1].at) continue;
    Case candidate = c;
    candidate.arrivals[i].at = candidate.arrivals[i - 1].at;
    if (still_fails(candidate)) {
      c = std::move(candidate);
      moved = true;
    }
  }
  return moved;
}

// The least bound on transit (to a millisecond, or a 64th of the bound) at which `c` still
// fails, `c` failing at its own: {the greatest found clean, the least found failing}; {0, 0}
// when it fails with no delay at all.
std::pair<Duration, Duration> LeastTransit(const Case& c,
                                           const std::function<bool(const Case&)>& still_fails) {
  Duration clean{0}, fails = MaxTransitOf(c);
  Case candidate = c;
  candidate.max_transit = Duration(0);
  if (fails.count() == 0 || still_fails(candidate)) return {Duration(0), Duration(0)};
  const Duration resolution = std::max<Duration>(std::chrono::milliseconds(1), fails / 64);
  while (fails - clean > resolution) {
    candidate.max_transit = clean + (fails - clean) / 2;
    if (still_fails(candidate)) {
      fails = *candidate.max_transit;
    } else {
      clean = *candidate.max_transit;
    }
  }
  return {clean, fails};
}

// Lowers `c`'s transit bound to the least it still fails at; then moves single requests in
// time (earlier or later, by halves of the bound down to a millisecond) where the case then
// still fails at three quarters of the bound, and lowers it again: a late request moved nearer
// the edge it crosses, a burst drawn tighter, need less transit. True when the bound fell.
bool LessTransit(Case& c, const std::function<bool(const Case&)>& still_fails) {
  const Duration before = MaxTransitOf(c);
  for (bool moved = true; moved;) {
    moved = false;
    const Duration least = LeastTransit(c, still_fails).second;
    c.max_transit = least;
    if (least.count() == 0) break;
    const Duration less = least * 3 / 4;
    for (size_t i = 0; i < c.arrivals.size() && !moved; ++i) {
      for (Duration by = least / 2; by >= std::chrono::milliseconds(1) && !moved; by /= 2) {
        for (const Duration shift : {by, -by}) {
          Case candidate = c;
          candidate.arrivals[i].at += shift;
          if (candidate.arrivals[i].at < c.start) continue;
          std::stable_sort(candidate.arrivals.begin(), candidate.arrivals.end(),
                           [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
          candidate.max_transit = less;
          if (still_fails(candidate)) {
            c = std::move(candidate);
            moved = true;
            break;
          }
        }
      }
    }
  }
  return MaxTransitOf(c) < before;
}

// The key request `id` of `run` found expired when it reached the store, and who set its time to
// live: a lapse the store noted in the millisecond of one of its steps, of a key holding its
// limiter key; the setter, the last request with a step of that key in the millisecond the time
// to live was set. None when the store noted none (a real server), or the request found none.
std::optional<TransitNeeded::Gone> FoundGone(const CaseRun& run, int64_t id) {
  const auto e = std::find_if(run.history.begin(), run.history.end(),
                              [&](const HistoryEvent& x) { return x.id == id; });
  if (e == run.history.end()) return std::nullopt;
  const auto holds = [](const std::string& kv_key, const HistoryEvent& x) {
    return !x.key.empty() && kv_key.find(x.key) != std::string::npos;
  };
  for (const KeyLapse& lapse : run.lapses) {
    if (!holds(lapse.key, *e)) continue;
    const auto then = std::find_if(e->steps.begin(), e->steps.end(), [&](const StepRecord& s) {
      return UnixMillis(s.at) == lapse.found_ms;
    });
    if (then == e->steps.end()) continue;
    const Instant gone_from = FromUnixMillis(lapse.expire_ms + 1);
    TransitNeeded::Gone gone{lapse.key, gone_from, then->at - gone_from,
                             std::chrono::milliseconds(lapse.expire_ms - lapse.set_ms), -1};
    Instant latest = Instant::min();
    for (const HistoryEvent& x : run.history) {
      if (x.id == id || x.key != e->key) continue;
      for (const StepRecord& s : x.steps) {
        if (UnixMillis(s.at) == lapse.set_ms && s.at >= latest) {
          latest = s.at;
          gone.set_by = x.id;
        }
      }
    }
    return gone;
  }
  return std::nullopt;
}

// What the witness of `c` needed of transit (see Finding::transit), its bound lowered to the
// least it breaks `invariant` at: nothing when it breaks it with every delay at most a step's
// ordinary latency, or not at all.
Result<std::optional<TransitNeeded>> TransitOf(const std::shared_ptr<const ProtocolInfo>& protocol,
                                               Case& c, uint64_t seed, CheckId invariant,
                                               const std::shared_ptr<StoreSource>& stores) {
  Status failure;
  const auto run = [&](Duration bound) -> std::optional<CaseRun> {
    Case candidate = c;
    candidate.max_transit = bound;
    Result<CaseRun> r = RunCase(protocol, candidate, seed, stores);
    if (!r.ok()) {
      failure = r.status();
      return std::nullopt;
    }
    return *std::move(r);
  };
  const auto fails = [&](const Case& candidate) {
    if (!failure.ok()) return false;
    const std::optional<CaseRun> r = run(MaxTransitOf(candidate));
    return r && r->first && r->first->invariant == invariant;
  };
  if (!fails(c)) return failure.ok() ? Result<std::optional<TransitNeeded>>(std::nullopt) : failure;
  const auto [clean, least] = LeastTransit(c, fails);
  if (!failure.ok()) return failure;
  if (least <= kSearchLatencyBase + kSearchLatencyJitter) return std::optional<TransitNeeded>();
  c.max_transit = least;
  const std::optional<CaseRun> broken = run(least), kept = run(clean);
  if (!failure.ok()) return failure;
  // The request a delay held longest: whose transit the lower bound shortened most.
  const auto transit = [](const HistoryEvent& e) {
    return e.steps.empty() ? Duration(0) : e.steps.back().at - e.invoke;
  };
  std::optional<TransitNeeded> out;
  Duration most{-1};
  for (const HistoryEvent& e : broken->history) {
    const auto same = std::find_if(kept->history.begin(), kept->history.end(),
                                   [&](const HistoryEvent& k) { return k.id == e.id; });
    if (same == kept->history.end() || e.steps.empty()) continue;
    if (transit(e) - transit(*same) > most) {
      most = transit(e) - transit(*same);
      out = TransitNeeded{e.id, transit(e), least, transit(*same), std::nullopt};
    }
  }
  if (out) out->gone = FoundGone(*broken, out->request);
  return out;
}

}  // namespace

Result<Case> Shrink(const std::shared_ptr<const ProtocolInfo>& protocol, Case c, uint64_t seed,
                    CheckId invariant, int budget, bool shrink_policy,
                    const std::shared_ptr<StoreSource>& stores) {
  Status failure;
  const auto still_fails = [&](const Case& candidate) {
    if (!failure.ok() || budget-- <= 0) return false;
    Result<CaseRun> run = RunCase(protocol, candidate, seed, stores);
    if (!run.ok()) {
      failure = run.status();
      return false;
    }
    return run->first && run->first->invariant == invariant;
  };
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    // A smaller limit first: the traffic drawn for the larger one shows most flaws at it too,
    // and then fewer requests show them.
    while (shrink_policy && c.policy.limit > 1) {
      Case candidate = c;
      --candidate.policy.limit;
      if (!protocol->Suits(candidate.policy).ok() || !still_fails(candidate)) break;
      c = std::move(candidate);
      progress = true;
    }
    if (TakeAwayRequests(c, still_fails)) progress = true;
    // Requests sent together often need fewer of them to show the same flaw (a race needs no
    // gap): each tries its predecessor's instant, kept only when more can then be taken away.
    if (Case together = c;
        MoveRequestsTogether(together, still_fails) && TakeAwayRequests(together, still_fails)) {
      c = std::move(together);
      progress = true;
    }
    for (size_t i = 0; i < c.faults.size();) {
      Case candidate = c;
      candidate.faults.erase(candidate.faults.begin() + static_cast<std::ptrdiff_t>(i));
      if (still_fails(candidate)) {
        c = std::move(candidate);
        progress = true;
      } else {
        ++i;
      }
    }
    if (LessTransit(c, still_fails)) progress = true;
  }
  if (!failure.ok()) return failure;
  return c;
}

Status TryOnItsStore(const std::shared_ptr<const ProtocolInfo>& protocol,
                     const std::shared_ptr<StoreSource>& stores, const Policy& policy, Instant at) {
  // A registry protocol needs no trying; a process is tried with the run's policy
  // (TryProcessOnce).
  if (!protocol->users_own || protocol->store != StoreKind::kKv) return absl::OkStatus();
  ManualClock clock(at);
  Result<std::unique_ptr<KvBackend>> store =
      stores ? stores->Open(clock, Durability::kAlways)
             : Result<std::unique_ptr<KvBackend>>(OpenMemoryKv(clock, Durability::kAlways));
  if (!store.ok()) return store.status();
  return TryOnce(*protocol, **store, policy, at);
}

Result<SearchResult> Search(const std::shared_ptr<const ProtocolInfo>& protocol,
                            const SearchOptions& o, const SearchProgress& progress) {
  if (protocol->delays_admissions && std::find(o.base.checks.begin(), o.base.checks.end(),
                                               CheckId::kRetryAfter) != o.base.checks.end()) {
    return absl::InvalidArgumentError(
        "--checks retry-after: " + protocol->name +
        " admits with a wait, and a delayed admission's retry has no model to be judged by "
        "(the model's wait is a token's, the limiter's is until a wait short enough)");
  }
  if (o.jobs < 1 || o.jobs > kMostJobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs must be between 1 and ", kMostJobs, ", not ", o.jobs));
  }
  if (o.jobs > 1 &&
      ((o.stores && o.stores->name().kind != StoreName::Kind::kMemory) || protocol->IsProcess())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--jobs ", o.jobs,
        ": seeds run side by side only on the embedded store, with a limiter "
        "ratelab runs itself; ",
        protocol->IsProcess() ? "a limiter process keeps one state for every seed"
                              : "the seeds would share the server's keys",
        ", so run them one at a time (--jobs 1) or split them between jobs with --shard"));
  }
  // One source for every seed, so that the embedded stores compile each script once (LuaCache,
  // which the threads of --jobs share).
  const std::shared_ptr<StoreSource> stores = o.stores ? o.stores : MemoryStores(o.stop);
  const auto stopped = [&] { return o.stop != nullptr && o.stop->load() != 0; };
  SearchResult result;
  if (Status s = TryOnItsStore(protocol, stores, o.base.policy, o.base.start); !s.ok()) {
    if (!stopped()) return s;
    result.interrupted = true;  // the stop ended its script
    return result;
  }
  if (Status s = TryProcessOnce(*protocol, o.base.policy, o.base.start); !s.ok()) return s;
  // One bound for every case and its shrink, whatever the shrink does to the policy.
  Case base = o.base;
  base.max_transit = MaxTransitOf(base);
  const auto draw = [&](uint64_t seed) {
    Case drawn = Draw(base, seed, o.faults, o.concurrency);
    AddKeysUsedOnce(drawn, seed);
    return drawn;
  };
  const auto fallbacks = [](const CaseRun& run) {
    uint64_t n = 0;
    for (const HistoryEvent& e : run.history) n += e.decision && e.decision->fallback;
    return n;
  };
  // The first seed, in order, whose run is not clean: the limiter's failure, or a finding shrunk
  // to its witness.
  const auto conclude = [&](uint64_t seed, const Case& drawn, CaseRun run) -> Result<SearchResult> {
    if (run.failure) {
      result.failure = LimiterFailure{seed, drawn, *std::move(run.failure)};
      return result;
    }
    result.fallback_decisions += fallbacks(run);
    Result<Case> minimal = Shrink(protocol, drawn, seed, run.first->invariant, o.shrink_budget,
                                  o.shrink_policy, stores);
    if (!minimal.ok()) return minimal.status();
    Result<std::optional<TransitNeeded>> transit =
        TransitOf(protocol, *minimal, seed, run.first->invariant, stores);
    if (!transit.ok()) return transit.status();
    Result<CaseRun> shown = RunCase(protocol, *minimal, seed, stores);
    if (!shown.ok()) return shown.status();
    if (stopped()) {  // the shrink cut short: what it kept is no witness
      result.interrupted = true;
      return result;
    }
    Finding f{seed,
              drawn,
              *std::move(minimal),
              shown->first ? shown->first_check : run.first_check,
              shown->first ? *shown->first : *run.first,
              {},
              std::move(shown->faults),
              {}};
    // The minimal case is the witness: every request in it is needed to break the invariant.
    if (shown->first) {
      // The witness is printed as it ran, its window as judged: uncut to match.
      UncutWindow(f.violation, protocol->time_resolution);
      f.witness = std::move(shown->history);
      f.transit = *transit;
      if (f.transit) f.transit->allowed = *base.max_transit;
    }
    result.finding = std::move(f);
    return result;
  };
  const auto clean = [](const CaseRun& run) { return !run.failure && !run.first; };
  if (o.jobs == 1) {
    for (uint64_t i = 0; i < o.seeds.count(); ++i) {
      const uint64_t seed = o.seeds.at(i);
      if (progress && !progress(seed)) {
        result.interrupted = true;
        return result;
      }
      ++result.seeds_searched;
      const Case drawn = draw(seed);
      Result<CaseRun> run = RunCase(protocol, drawn, seed, stores);
      if (!run.ok()) return run.status();
      // A run the stop cut short (its scripts ended in the stop's error) is no result.
      if (stopped()) {
        result.interrupted = true;
        --result.seeds_searched;
        return result;
      }
      if (!clean(*run)) return conclude(seed, drawn, *std::move(run));
      result.fallback_decisions += fallbacks(*run);
    }
    return result;
  }
  // Side by side: the threads, this one among them, take the seeds in order, each the next no one
  // has taken, and this thread reads their runs in seed order, as one thread reads the seeds, up
  // to the first that is not clean; it is then shrunk here. No thread starts a seed past the
  // first that is not clean found so far, nor more than kSearchAheadPerJob a thread past the seed
  // being read, so the result is one thread's, seed for seed, and what is held is bounded. The
  // progress is told of a seed once it ran, not before.
  struct Outcome {
    bool done = false;
    uint64_t fallbacks = 0;              // a clean seed's
    std::optional<Case> drawn;           // a seed that is not clean, or whose run failed
    std::optional<Result<CaseRun>> run;  // the same
  };
  const uint64_t count = o.seeds.count();
  const uint64_t ahead = kSearchAheadPerJob * static_cast<uint64_t>(o.jobs);
  std::mutex mu;
  std::condition_variable ran, room;  // the seed being read has run; a thread may take one more
  std::deque<Outcome> outcomes;       // the seeds from `reading` on, as far as taken
  uint64_t reading = 0, next = 0, first_unclean = count;
  int waiting = 0;              // threads waiting for room
  bool reader_waiting = false;  // this thread, for the seed being read
  bool quit = false;
  // Whether no more seeds are to be taken, whatever is read.
  const auto over = [&] { return quit || stopped() || next >= count || next > first_unclean; };
  // Runs the next few seeds (kSearchSeedsATake, fewer at the end or at the bound), unless none may
  // be taken now; `lock` is held before and after.
  const auto take = [&](std::unique_lock<std::mutex>& lock) {
    if (over() || next >= reading + ahead) return false;
    const uint64_t from = next;
    const uint64_t n = std::min({kSearchSeedsATake, count - from, reading + ahead - from});
    next += n;
    outcomes.resize(outcomes.size() + n);
    lock.unlock();
    std::array<Outcome, kSearchSeedsATake> ran_here;
    uint64_t unclean = count;
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t seed = o.seeds.at(from + k);
      Outcome& out = ran_here[k];
      out.drawn = draw(seed);
      Result<CaseRun> run = RunCase(protocol, *out.drawn, seed, stores);
      if (run.ok() && clean(*run)) {
        out.fallbacks = fallbacks(*run);
        out.drawn.reset();
        continue;
      }
      out.run = std::move(run);
      unclean = from + k;
      break;  // the seeds after it are not read
    }
    lock.lock();
    first_unclean = std::min(first_unclean, unclean);
    for (uint64_t k = 0; k < n; ++k) {
      outcomes[from + k - reading] = std::move(ran_here[k]);
      outcomes[from + k - reading].done = true;  // one the break left unrun is never read
    }
    if (from == reading && reader_waiting) ran.notify_one();
    return true;
  };
  const auto work = [&] {
    std::unique_lock lock(mu);
    while (take(lock) || !over()) {
      if (next < reading + ahead) continue;
      ++waiting;
      room.wait(lock, [&] { return over() || next < reading + ahead; });
      --waiting;
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(o.jobs - 1));
  for (int t = 1; t < o.jobs; ++t) threads.emplace_back(work);
  const auto join = [&] {
    {
      std::lock_guard lock(mu);
      quit = true;
    }
    room.notify_all();
    for (std::thread& t : threads) t.join();
  };
  std::vector<Outcome> batch;  // the runs read at once: every one done at the front
  for (uint64_t i = 0; i < count;) {
    batch.clear();
    bool more_room = false;
    {
      std::unique_lock lock(mu);
      const auto front_done = [&] { return !outcomes.empty() && outcomes.front().done; };
      // The seed being read runs on another thread: run another meanwhile, or wait. Stopped, a
      // seed not yet run may never be: the threads take no more.
      while (!front_done() && !stopped()) {
        if (take(lock)) continue;
        reader_waiting = true;
        ran.wait(lock, [&] { return stopped() || front_done(); });
        reader_waiting = false;
      }
      while (front_done()) {
        batch.push_back(std::move(outcomes.front()));
        outcomes.pop_front();
        ++reading;
      }
      more_room = waiting > 0;
    }
    if (more_room) room.notify_all();
    for (Outcome& out : batch) {
      // Once the stop is set no seed counts, as on one thread (and a run that ended after it may
      // be one it cut short).
      if (stopped()) break;
      const uint64_t seed = o.seeds.at(i++);
      if (progress && !progress(seed)) {
        result.interrupted = true;
        join();
        return result;
      }
      ++result.seeds_searched;
      if (out.run) {
        join();
        if (!out.run->ok()) return out.run->status();
        return conclude(seed, *out.drawn, **std::move(out.run));
      }
      result.fallback_decisions += out.fallbacks;
    }
    if (stopped() || batch.empty()) {  // batch empty: stopped before the seed being read ran
      result.interrupted = true;
      join();
      return result;
    }
  }
  join();
  return result;
}

}  // namespace ratelab
