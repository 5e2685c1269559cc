#include "judge/linearizability.h"

#include <algorithm>
#include <compare>
#include <map>
#include <string_view>
#include <type_traits>
#include <unordered_set>

#include "judge/bucket_zones.h"
#include "judge/depth_first_search.h"
#include "judge/search_state.h"
#include "model/key_model.h"
#include "model/key_models.h"
#include "model/named.h"

namespace ratelab {

std::string_view LinearVerdictName(LinearVerdict verdict) {
  return NameOf<LinearVerdictInfo>(kLinearVerdicts, verdict);
}

namespace {

// The most search steps a key of `calls` calls may take.
int64_t Budget(const LinearizabilityOptions& o, size_t calls) {
  return std::max(o.max_states, o.max_states_per_call * static_cast<int64_t>(calls));
}

// `t` as a clock of resolution `r` shows it.
Instant Floor(Instant t, Duration r) {
  const int64_t ns = t.time_since_epoch().count();
  const int64_t step = r.count();
  const int64_t q = ns / step - (ns % step < 0 ? 1 : 0);
  return Instant(Duration(q * step));
}

// Whether the model's decision `d` is the answer `a`, in what `o` compares.
bool Matches(const Decision& d, const Decision& a, const LinearizabilityOptions& o) {
  if (d.allowed != a.allowed) return false;
  if (o.remaining && d.remaining != a.remaining) return false;
  if (o.retry_after && !a.allowed) {
    Duration want = d.retry_after;
    const Duration unit = o.retry_after_unit;
    if (unit > Duration::zero() && want != kNever) want = (want + unit - Duration(1)) / unit * unit;
    if (want != a.retry_after) return false;
  }
  return true;
}

// The search over instants for the calls of one key, as a space of DepthFirstSearch: each call is
// tried at the instants it can be seen at, under the key model `State`.
template <KeyModel State>
class InstantSpace {
 public:
  // `most_ticks`: when given, CandidateInstants tries points at most that many ticks past a
  // whole number of windows from a call's first instant (ticks_cut() then says whether that
  // left out any it would otherwise try).
  InstantSpace(const Policy& policy, std::span<const LinearOp> ops,
               const LinearizabilityOptions& options, std::optional<int64_t> most_ticks,
               int64_t budget)
      : policy_(policy), calls_(ops), options_(options), most_ticks_(most_ticks), steps_{budget} {
    for (const LinearOp& op : ops) firsts_.push_back(Floor(op.invoke, options.resolution));
    std::sort(firsts_.begin(), firsts_.end());
    firsts_.erase(std::unique(firsts_.begin(), firsts_.end()), firsts_.end());
  }

  bool ticks_cut() const { return ticks_cut_; }

  KeyLinearizability Run() {
    const Instant start = calls_.size() == 0 ? Instant{} : calls_[0].invoke;
    return DepthFirstSearch(*this, Node{State(), start, {}});
  }

  // Where the search is: the model's state, the earliest instant the next call can take effect
  // at, and which calls are placed.
  struct Node {
    State state;
    Instant real_lo{};
    PlacedCalls placed;

    std::pair<uint64_t, uint64_t> Hash() const {
      StateHash h;
      state.HashInto(h);
      h.Add(real_lo);
      placed.HashInto(h);
      return h.value();
    }
  };
  // A call to place next (by sorted position), at the instant the limiter saw.
  struct Choice {
    size_t op = 0;
    Instant seen{};
    Instant real{};
  };
  using Step = LinearStep;
  struct Frame {
    Node node;
    std::vector<Choice> choices;
    std::optional<size_t> blocking;  // the answered call left that is answered first
    Instant hi{};                    // when it was answered
    // Whether it has a choice here; not known when a denial went alone, tried alone.
    std::optional<bool> blocking_fits = false;
  };

  // The frame of `node` with its choices; a linearization when nothing answered is left to place
  // (the calls left without an answer may never have taken effect).
  Entered<Frame> Enter(Node node) {
    if (!seen_.insert(node.Hash()).second) return Entered<Frame>::Nothing();
    steps_.Take();
    Frame f{std::move(node), {}, std::nullopt};
    const SentCalls::Region region = calls_.RegionAfter(f.node.placed);
    if (!region.hi) return Entered<Frame>::Linearization();
    const std::optional<Instant> hi = region.hi;
    f.blocking = region.blocking;
    f.hi = *hi;
    // A call answered with a denial that can go next leaving everything as it is goes next,
    // alone: in any order of the calls left it can be moved to the front, and every other call
    // still gets its answer. On the store's clock it must be denied at the earliest instant the
    // next call may take effect at (so that the calls after it keep theirs); on the client's, at
    // any instant of its interval. Its first instant is tried before any other call's.
    std::vector<std::pair<size_t, std::pair<Instant, Instant>>> spans;  // of those that can go
    for (const size_t i : region.calls) {
      if (const auto span = Span(f.node, i, *hi)) spans.emplace_back(i, *span);
    }
    for (const auto& [i, span] : spans) {
      const LinearOp& op = Op(i);
      if (!op.answer || op.answer->allowed) continue;
      if (options_.instants_follow_order && span.first != f.node.real_lo) continue;
      const Probe p = ProbeAt(f.node.state, op, Floor(span.first, options_.resolution));
      if (!p.fits) continue;
      f.choices = {Choice{i, p.seen, std::max(span.first, p.seen)}};
      f.blocking_fits.reset();  // not known: only this call was tried
      return Entered<Frame>::Open(std::move(f));
    }
    for (const auto& [i, span] : spans) {
      AddChoices(f.node.state, i, span.first, span.second, f.choices);
    }
    f.blocking_fits =
        f.blocking && std::any_of(f.choices.begin(), f.choices.end(),
                                  [&](const Choice& c) { return c.op == *f.blocking; });
    if (!options_.instants_follow_order) {
      for (const Choice& c : f.choices) {
        const LinearOp& op = Op(c.op);
        if (op.answer && !op.answer->allowed) {
          f.choices = {c};
          break;
        }
      }
    }
    return Entered<Frame>::Open(std::move(f));
  }

  // Choice `k` of `f` followed: the call at its instant, and the node it leaves.
  std::pair<Step, Node> Take(const Frame& f, size_t k) const {
    const Choice& c = f.choices[k];
    return {LinearStep{calls_.Index(c.op), c.seen}, Place(f.node, c)};
  }
  // Whether the blocking call cannot follow `f`'s node: at no instant it can take would the model
  // give its answer.
  bool CannotFollow(const Frame& f) {
    if (f.blocking_fits) return !*f.blocking_fits;
    std::vector<Choice> choices;  // not known: only a denial was tried
    if (const auto span = Span(f.node, *f.blocking, f.hi)) {
      AddChoices(f.node.state, *f.blocking, span->first, span->second, choices);
    }
    return choices.empty();
  }
  std::vector<LinearStep> Order(const std::vector<Step>& path) const { return path; }
  bool Exact() const { return !approximated_; }
  size_t Index(size_t position) const { return calls_.Index(position); }
  const SearchSteps& steps() const { return steps_; }

 private:
  const LinearOp& Op(size_t position) const { return calls_[position]; }

  // The instants call `i` can take effect at from `node`, when the calls left are answered by
  // `hi`: none when there are none.
  std::optional<std::pair<Instant, Instant>> Span(const Node& node, size_t i, Instant hi) const {
    const LinearOp& op = Op(i);
    if (op.invoke > hi) return std::nullopt;
    const Instant lo =
        options_.instants_follow_order ? std::max(node.real_lo, op.invoke) : op.invoke;
    const Instant up = LatestInstant(op, options_, hi, calls_.last());
    if (lo > up) return std::nullopt;
    return std::pair{lo, up};
  }

  // What a call seen at one instant gives: the parts of its decision compared, and the state
  // it leaves.
  struct Probe {
    Instant seen{};
    bool fits = false;  // the decision is the call's answer (or the call has none)
    Decision decision;
    State next;
  };
  Probe ProbeAt(const State& state, const LinearOp& op, Instant seen) {
    steps_.Take();  // the budget counts the instants tried too
    const Decision d = state.Peek(policy_, seen, op.cost);
    Probe p{seen, !op.answer || Matches(d, *op.answer, options_), d, state};
    if (d.allowed) p.next.Admit(policy_, seen, op.cost);
    return p;
  }
  // Whether every instant between two probes does what they do: a model's decision and the
  // state it leaves move monotonically with the instant (a window edge, a refill), so equal ends
  // leave nothing different between.
  // On the store's clock, `a` (the earlier) is as good when the states the two leave are the same
  // from `b`'s instant on (a bucket refilled to it): every call after either takes effect no
  // sooner than its instant, and after `a` it may take effect sooner too.
  bool Same(const Probe& a, const Probe& b) const {
    const Decision& x = a.decision;
    const Decision& y = b.decision;
    return a.fits == b.fits && x.allowed == y.allowed &&
           (!options_.remaining || x.remaining == y.remaining) &&
           (!options_.retry_after || x.retry_after == y.retry_after) &&
           (a.next == b.next || (options_.instants_follow_order &&
                                 Forgotten(a.next, b.seen) == Forgotten(b.next, b.seen)));
  }
  // `state` as every instant from `from` on sees it.
  State Forgotten(State state, Instant from) const {
    if constexpr (ForgettingModel<State>) state.Forget(policy_, from);
    return state;
  }

  // The instants call `i` can be seen at in [lo, up] that give its answer, the earliest of each
  // run of instants that leave the same state, found by halving the span where its ends differ.
  // Where a call's state differs at more than `options_.most_instants` instants (a window or a
  // bucket anchored at the instant itself, on a fine clock), the instants tried are those that
  // can matter to the calls after it instead (CandidateInstants); where the model has no such
  // points, a search that then finds no order says "unknown".
  void AddChoices(const State& state, size_t i, Instant lo, Instant up, std::vector<Choice>& out) {
    const LinearOp& op = Op(i);
    const Duration r = options_.resolution;
    std::vector<Probe> found;  // in time order, each differing from the one before
    const auto keep = [&](Probe p) {
      if (found.empty() || !Same(found.back(), p)) found.push_back(std::move(p));
    };
    bool capped = false;
    size_t most = options_.most_instants;
    // `same`: whether two probes need nothing between them tried.
    const auto split = [&](auto& self, const Probe& a, const Probe& b, auto same) -> void {
      if (same(a, b) || b.seen - a.seen <= r) return;
      if (found.size() >= most) {
        capped = true;
        return;
      }
      const int64_t steps = (b.seen - a.seen) / r;
      Probe m = ProbeAt(state, op, a.seen + steps / 2 * r);
      self(self, a, m, same);
      keep(m);
      self(self, m, b, same);
    };
    const Probe first = ProbeAt(state, op, Floor(lo, r));
    const Probe last = ProbeAt(state, op, Floor(up, r));
    keep(first);
    split(split, first, last, [&](const Probe& a, const Probe& b) { return Same(a, b); });
    keep(last);
    if (capped) {
      if (!CandidatesExact()) {
        approximated_ = true;
      } else {
        // The instants where the call's own answer changes, and those where a later call's
        // can: each is tried, in time order, the earliest of each run that leaves one state.
        // An answer changes at a few instants (at an edge of the state's window, or as a
        // bucket fills): more than kMostAnswers is a model this cannot be exact for.
        constexpr size_t kMostAnswers = 64;
        found.clear();
        capped = false;
        most = kMostAnswers;
        keep(first);
        split(split, first, last, [&](const Probe& a, const Probe& b) { return SameAnswer(a, b); });
        if (capped) approximated_ = true;
        std::vector<Instant> at;
        for (const Probe& p : found) at.push_back(p.seen);
        CandidateInstants(Floor(lo, r), Floor(up, r), at);
        std::sort(at.begin(), at.end());
        at.erase(std::unique(at.begin(), at.end()), at.end());
        found.clear();
        for (const Instant t : at) keep(ProbeAt(state, op, t));
      }
    }
    for (const Probe& p : found) {
      if (p.fits) out.push_back(Choice{i, p.seen, std::max(lo, p.seen)});
    }
  }

  // Whether two probes give the same answer, whatever state they leave.
  bool SameAnswer(const Probe& a, const Probe& b) const {
    const Decision& x = a.decision;
    const Decision& y = b.decision;
    return a.fits == b.fits && x.allowed == y.allowed &&
           (!options_.remaining || x.remaining == y.remaining) &&
           (!options_.retry_after || x.retry_after == y.retry_after);
  }

  // Whether CandidateInstants holds every instant a linearization needs. It does for a model
  // that tests instants only against one another, apart by whole windows (a window opened at a
  // request, a bucket's refill, a log's entries), when the clock's ticks divide the window and
  // only what depends on that is compared (not a wait, which is any span).
  bool CandidatesExact() const {
    return State::kTimeTests.only_differences && !options_.retry_after &&
           policy_.window.count() % options_.resolution.count() == 0;
  }

  // The points a linearization may need a call at, for a model that tests instants only against
  // one another, apart by whole windows. Given an order of the calls and which side of each test
  // each falls on, the instants that do so are the integer solutions of constraints x - y >= d,
  // one per test, each d a whole number of windows, a tick more where the test is strict, and the
  // calls' intervals; the earliest solution (the least of every instant) is one too, and each of
  // its instants is a call's first possible instant (a base) plus the d of a path of constraints
  // along which each instant is the least its constraints allow. So it is a base plus whole
  // windows plus as many ticks as the path's strict tests. A path holds each constraint once, and
  // strict tests lead into a window's opening, a refill or a bucket's busy period (at most one a
  // window) or, for a log, into an entry (at most `limit` a window). A window's or a log's test
  // spans one window, so such a path steps a window at a time, each step an instant inside some
  // call's interval: from each base, only the windows reached that way are points. (A bucket's
  // test spans as many windows as it holds tokens: every whole window of the history is one.)
  // Trying every point, with the instants where the call's own answer changes, misses no
  // linearization; with `most_ticks_` it tries fewer ticks (ticks_cut_ says whether it did).
  void MakePoints() {
    const Duration w = policy_.window;
    const Duration r = options_.resolution;
    const int64_t windows = ((calls_.last() - firsts_.front()) / w) + 2;
    ticks_ = windows * (State::kTimeTests.each_entry ? std::max<int64_t>(policy_.limit, 1) : 1);
    if (most_ticks_ && ticks_ > *most_ticks_) {
      ticks_ = *most_ticks_;
      ticks_cut_ = true;
    }
    windows_ = windows;
    if (!kStepsOneWindow) return;  // every whole window of every base: CandidateInstants
    // The calls' intervals by first instant, and the latest end of those that begin by each.
    std::vector<std::pair<Instant, Instant>> spans;
    for (size_t i = 0; i < calls_.size(); ++i) {
      const LinearOp& op = calls_[i];
      spans.push_back({Floor(op.invoke, r), op.answer ? Floor(op.complete, r) : calls_.last()});
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      spans[i].second = std::max(spans[i].second, spans[i - 1].second);
    }
    // Whether some call's interval meets [t, t + ticks].
    const auto inside = [&](Instant t) {
      auto it = std::upper_bound(spans.begin(), spans.end(), t + ticks_ * r,
                                 [](Instant v, const auto& s) { return v < s.first; });
      return it != spans.begin() && std::prev(it)->second >= t;
    };
    for (const Instant base : firsts_) {
      points_.push_back(base);
      for (const int64_t step : {int64_t{1}, int64_t{-1}}) {
        for (int64_t k = step; k >= -windows && k <= windows; k += step) {
          const Instant t = base + k * w;
          if (!inside(t)) break;
          points_.push_back(t);
        }
      }
    }
    std::sort(points_.begin(), points_.end());
    points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
  }

  // Adds the points in (lo, up], each up to `ticks_` ticks on (MakePoints).
  void CandidateInstants(Instant lo, Instant up, std::vector<Instant>& out) {
    if (!points_made_) {
      MakePoints();
      points_made_ = true;
    }
    const Duration r = options_.resolution;
    const auto add = [&](Instant point) {
      for (int64_t c = 0; c <= ticks_; ++c) {
        const Instant t = point + c * r;
        if (t > lo && t <= up) out.push_back(t);
      }
    };
    if (kStepsOneWindow) {
      for (auto it = std::lower_bound(points_.begin(), points_.end(), lo - ticks_ * r);
           it != points_.end() && *it <= up; ++it) {
        add(*it);
      }
      return;
    }
    const Duration w = policy_.window;
    for (int64_t k = -windows_; k <= windows_; ++k) {
      for (auto it = std::lower_bound(firsts_.begin(), firsts_.end(), lo - k * w - ticks_ * r);
           it != firsts_.end() && *it <= up - k * w; ++it) {
        add(*it + k * w);
      }
    }
  }
  static constexpr bool kStepsOneWindow = State::kTimeTests.one_window;

  State After(const State& state, const Decision& d, Instant seen, int64_t cost) const {
    State next = state;
    if (d.allowed) next.Admit(policy_, seen, cost);
    return next;
  }

  Node Place(const Node& from, const Choice& c) const {
    Node n;
    n.state =
        After(from.state, from.state.Peek(policy_, c.seen, Op(c.op).cost), c.seen, Op(c.op).cost);
    if (options_.instants_follow_order) n.real_lo = c.real;
    n.placed = from.placed.With(c.op);
    // What no later call can see is forgotten, so that states that differ only there are one.
    if constexpr (ForgettingModel<State>) {
      if (n.placed.first < calls_.size()) {
        const Instant from = options_.instants_follow_order
                                 ? std::max(n.real_lo, Op(n.placed.first).invoke)
                                 : Op(n.placed.first).invoke;
        n.state.Forget(policy_, Floor(from, options_.resolution));
      }
    }
    // Every call left was sent no sooner than the first of them: an earliest instant before
    // that holds nothing back, and is that instant (so that more states are the same).
    if (options_.instants_follow_order && n.placed.first < calls_.size()) {
      n.real_lo = std::max(n.real_lo, Op(n.placed.first).invoke);
    }
    return n;
  }

  const Policy& policy_;
  SentCalls calls_;
  const LinearizabilityOptions& options_;
  std::optional<int64_t> most_ticks_;
  SearchSteps steps_;
  // MakePoints's, made when first needed.
  bool points_made_ = false;
  std::vector<Instant> points_;  // a window's or a log's (kStepsOneWindow); a bucket's are made
                                 // as asked for
  int64_t windows_ = 0;          // how many windows the history spans, and two
  int64_t ticks_ = 0;
  bool ticks_cut_ = false;       // fewer than every tick tried: most_ticks_ held them
  std::vector<Instant> firsts_;  // the first instant each call can be seen at, ascending, once each
  std::unordered_set<std::pair<uint64_t, uint64_t>, PairHash> seen_;
  bool approximated_ = false;  // a call's later instants went untried
};

// A linearization's instants seldom need more than a tick past a whole number of windows from a
// call's first instant (ties at the clock's tick, chained): the search first tries only those,
// and only when that finds no order does it try every point CandidateInstants holds, with the
// budget left, so that "not linearizable" is never a verdict the short search alone gave.
template <KeyModel State>
KeyLinearizability Search(const Policy& policy, std::span<const LinearOp> ops,
                          const LinearizabilityOptions& options, int64_t budget) {
  InstantSpace<State> quick(policy, ops, options, int64_t{1}, budget);
  KeyLinearizability r = quick.Run();
  if (r.verdict != LinearVerdict::kNotLinearizable || !quick.ticks_cut()) return r;
  KeyLinearizability exact = InstantSpace<State>(policy, ops, options, std::nullopt,
                                                 std::max<int64_t>(0, budget - r.states))
                                 .Run();
  exact.states += r.states;
  return exact;
}

// A sliding log on the client's clock, where a call can take effect after one that read a later
// instant. SlidingLogModel then keeps its entry as made at that later instant (a log kept in the
// order of admission, as a list keeps it), so which entries a burst of admissions leaves depends
// on their order, and a search can try many orders of one burst before the calls a window later
// accept one (a 16-thread `stress` history of a sorted-set script: 15 M steps). A log kept as a
// sorted set keeps each entry at its own instant, and counts later ones (SlidingLogSortedModel):
// its entries are the same in any order, so its search is near linear. Both keep at most N in any
// W, so an order either gives is a linearization: the sorted set is searched first, with half the
// budget, then the model's own with the rest; "not linearizable" only when both say so.
KeyLinearizability SearchLogOnClientClock(const Policy& policy, std::span<const LinearOp> ops,
                                          const LinearizabilityOptions& options, int64_t budget) {
  const KeyLinearizability sorted = Search<SlidingLogSortedModel>(policy, ops, options, budget / 2);
  if (sorted.verdict == LinearVerdict::kLinearizable) return sorted;
  KeyLinearizability own =
      Search<SlidingLogModel>(policy, ops, options, std::max<int64_t>(0, budget - sorted.states));
  own.states += sorted.states;
  if (own.verdict == LinearVerdict::kNotLinearizable && sorted.verdict == LinearVerdict::kUnknown) {
    own.verdict = LinearVerdict::kUnknown;  // the sorted set's orders are not all ruled out
  }
  return own;
}

// The search over instants, for the model of `policy`, within `budget` steps.
KeyLinearizability SearchInstants(const Policy& policy, std::span<const LinearOp> ops,
                                  const LinearizabilityOptions& options, int64_t budget) {
  return WithKeyModel(policy.algorithm, [&]<KeyModel M>() {
    if constexpr (std::is_same_v<M, SlidingLogModel>) {
      if (!options.instants_follow_order) {
        return SearchLogOnClientClock(policy, ops, options, budget);
      }
    }
    return Search<M>(policy, ops, options, budget);
  });
}

}  // namespace

Instant LatestInstant(const LinearOp& op, const LinearizabilityOptions& options, Instant hi,
                      Instant last) {
  if (options.instants_follow_order) return op.answer ? std::min(op.complete, hi) : hi;
  if (options.read_at_send) return op.invoke;
  return op.answer ? op.complete : std::max(op.invoke, last);
}

KeyLinearizability CheckLinearizable(const Policy& policy, std::span<const LinearOp> ops,
                                     const LinearizabilityOptions& options) {
  const int64_t budget = Budget(options, ops.size());
  if (!BucketZonesApply(policy, ops, options)) return SearchInstants(policy, ops, options, budget);
  // A bucket is decided by either search: by zones (bucket_zones.h), from the orders of its calls
  // alone, where a race opens it at any nanosecond of a wide span (a probe's, on the store's
  // clock); over instants, in fewer steps, where its calls are narrow against its refills (a
  // stress run's, on the client's clock). The one more likely to decide goes first, each with half
  // the budget (a search can pass its budget while it tries one call's instants: the second still
  // gets its half).
  const bool zones_first = options.instants_follow_order;
  const auto by = [&](bool zones, int64_t most) {
    return zones ? CheckBucketByZones(policy, ops, options, most)
                 : SearchInstants(policy, ops, options, most);
  };
  KeyLinearizability first = by(zones_first, budget / 2);
  if (first.verdict != LinearVerdict::kUnknown) return first;
  KeyLinearizability second = by(!zones_first, budget - budget / 2);
  second.states += first.states;
  // Neither decided: the lead is the longer order found.
  if (second.verdict == LinearVerdict::kUnknown && first.order.size() > second.order.size()) {
    first.states = second.states;
    return first;
  }
  return second;
}

HistoryLinearizability CheckHistoryLinearizable(const Policy& policy, const History& history,
                                                const LinearizabilityOptions& options) {
  std::map<std::string_view, std::vector<const HistoryEvent*>> by_key;
  for (const HistoryEvent& e : history) by_key[e.key].push_back(&e);
  HistoryLinearizability out;
  LinearizabilityOptions broken_options;  // for a key already broken: a smaller budget
  if (!options.already_broken.empty()) {
    broken_options = options;
    broken_options.already_broken.clear();
    broken_options.max_states = std::min(options.max_states, options.broken_max_states);
    broken_options.max_states_per_call = 0;
  }
  // A key whose windows start at an offset is searched on a clock that much behind, where they
  // start at the epoch (the models' states know no key), and its order told back on its own.
  Policy at_epoch = policy;
  at_epoch.offset = {};
  for (auto& [key, events] : by_key) {
    std::stable_sort(
        events.begin(), events.end(),
        [](const HistoryEvent* a, const HistoryEvent* b) { return a->invoke < b->invoke; });
    const Duration shift = policy.OffsetOf(key);
    std::vector<LinearOp> ops;
    ops.reserve(events.size());
    for (const HistoryEvent* e : events) {
      ops.push_back(LinearOp{e->invoke - shift, e->complete - shift, e->cost, e->decision});
    }
    const bool broken = options.already_broken.contains(key);
    KeyLinearizability r = CheckLinearizable(at_epoch, ops, broken ? broken_options : options);
    for (LinearStep& step : r.order) step.at += shift;
    ++out.keys;
    out.ops += static_cast<int64_t>(ops.size());
    out.states += r.states;
    if (broken && r.verdict == LinearVerdict::kUnknown) {
      ++out.broken_keys_cut_short;
      continue;
    }
    if (r.verdict == LinearVerdict::kUnknown) ++out.unknown_keys;
    const bool worse =
        r.verdict == LinearVerdict::kNotLinearizable
            ? out.verdict != LinearVerdict::kNotLinearizable
            : r.verdict == LinearVerdict::kUnknown && out.verdict == LinearVerdict::kLinearizable;
    if (!worse) continue;
    out.verdict = r.verdict;
    out.key = std::string(key);
    out.events = events;
    out.detail = std::move(r);
  }
  return out;
}

}  // namespace ratelab
