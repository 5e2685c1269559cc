#include "judge/bucket_zones.h"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "judge/depth_first_search.h"
#include "judge/search_state.h"
#include "model/key_model.h"
#include "model/key_models.h"

namespace ratelab {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;  // no bound

int64_t Plus(int64_t a, int64_t b) { return a >= kInf || b >= kInf ? kInf : a + b; }

// The instants of a zone: x0 is zero, then F (when the bucket is full again), the second variable
// (the last call's instant, or M: Clock), and the call being placed.
enum Var { kZero = 0, kFullAt = 1, kLast = 2, kNew = 3 };

// Difference bounds over N variables: m[i][j] bounds x_i - x_j from above (kInf: no bound).
template <int N>
struct Dbm {
  std::array<std::array<int64_t, N>, N> m{};

  static Dbm Unbounded() {
    Dbm d;
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) d.m[i][j] = i == j ? 0 : kInf;
    }
    return d;
  }
  void Tighten(int i, int j, int64_t bound) { m[i][j] = std::min(m[i][j], bound); }
  // Makes every bound the tightest the others imply (Floyd-Warshall); false when no instants
  // satisfy them.
  bool Close() {
    for (int k = 0; k < N; ++k) {
      for (int i = 0; i < N; ++i) {
        for (int j = 0; j < N; ++j) m[i][j] = std::min(m[i][j], Plus(m[i][k], m[k][j]));
      }
    }
    for (int i = 0; i < N; ++i) {
      if (m[i][i] < 0) return false;
    }
    return true;
  }
  // Whether every point of this (closed) zone is in `o`'s.
  bool Within(const Dbm& o) const {
    for (int i = 0; i < N; ++i) {
      for (int j = 0; j < N; ++j) {
        if (m[i][j] > o.m[i][j]) return false;
      }
    }
    return true;
  }
  // Forgets variable `v`: unbounded.
  void Drop(int v) {
    for (int i = 0; i < N; ++i) m[i][v] = m[v][i] = i == v ? 0 : kInf;
  }
};

// Whose clock the instants are on, and what the second variable of a zone is.
enum class Clock {
  // The store's: the instants follow the order the calls take effect in; the variable is the
  // last call's instant, before every instant left.
  kStore,
  // The client's, for a bucket that decides at the instant it is given, even one before the last
  // (GCRA: Zones::kBucketAtGivenInstant): each call at any instant of its interval; no second
  // variable.
  kClient,
  // The client's, for a token bucket, which decides at the latest instant it has refilled to, M
  // (an instant before it decides as at M); the variable is M.
  kClientLatest,
};

// How a placed call took effect: denied (F unchanged), admitted while F was ahead of the instant
// it decided at (F moves on by its cost), or admitted at or after F (the bucket was full: F is
// that instant plus its cost).
enum class Effect { kDenied, kAdmittedBeforeFull, kAdmittedWhenFull };

// At most N values, kept in place (the search makes such lists for every call it tries).
template <typename T, size_t N>
class Few {
 public:
  void push_back(const T& v) { items_[size_++] = v; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }

 private:
  std::array<T, N> items_{};
  size_t size_ = 0;
};

// One bound of a zone, x_i - x_j <= bound, and its negation.
struct Bound {
  int i = kZero;
  int j = kZero;
  int64_t bound = 0;
  Bound Negated() const { return Bound{j, i, -bound - 1}; }
};

// The search by zones for the calls of one key, as a space of DepthFirstSearch.
class ZoneSpace {
 public:
  ZoneSpace(const Policy& policy, std::span<const LinearOp> ops,
            const LinearizabilityOptions& options, Clock clock, int64_t tick, int64_t budget)
      : calls_(ops), options_(options), clock_(clock), steps_{budget}, tick_(tick) {
    origin_ = FloorDiv(ToUnixNanos(calls_[0].invoke), tick) * tick;
    period_ = policy.window.count() / tick;
    limit_ = policy.limit;
    credit_ = CreditOf(policy) == BucketCredit::kOneToken;
  }

  KeyLinearizability Run() { return DepthFirstSearch(*this, Root()); }

  // Which calls are placed, whether the bucket is full from every instant a call left can decide
  // at, and the zone of F (unless full) and of the second variable (Clock).
  struct Node {
    bool full = true;
    Dbm<3> zone;
    PlacedCalls placed;

    std::pair<uint64_t, uint64_t> Key() const {
      StateHash h;
      h.Add(int64_t{full});
      placed.HashInto(h);
      return h.value();
    }
  };
  struct Step {
    size_t position = 0;  // the call's sorted position
    Effect effect = Effect::kDenied;
    bool at_first = false;       // at the first instant it can take: the last call's on the store's
                                 // clock, its own first on the client's
    bool before_latest = false;  // kClientLatest: its instant before M (it decides as at M)
  };
  // A call placed: the zone of the instants before it and its own (closed), and the node after,
  // whose F and second variable are those of `instants` named by `from` (F shifted by `shift`);
  // none where `next` has no such (full, or none kept).
  struct Placed {
    Dbm<4> instants;
    Node next;
    std::optional<int> full_at_from;
    int64_t shift = 0;
    std::optional<int> second_from;  // none too where it was pinned to the calls left
  };
  // A way to go on from a frame: the step, and the node it leaves (not the instants' zone, which
  // only the order found needs, and Instants works out again: a frame keeps every choice it has).
  struct Choice {
    Step step;
    Node next;
  };
  struct Frame {
    Node node;
    std::vector<Choice> choices;
    std::optional<size_t> blocking;  // the answered call left that is answered first
    Instant hi{};                    // when it was answered
  };

  // The frame of `node` with its choices; a linearization when nothing answered is left to place;
  // nothing when its zone is inside one tried with the same calls placed.
  Entered<Frame> Enter(Node node) {
    const SentCalls::Region region = calls_.RegionAfter(node.placed);
    if (!region.hi) return Entered<Frame>::Linearization();
    if (clock_ == Clock::kStore) {
      // Every answered call left takes effect at or after the last instant: a later one is dead.
      node.zone.Tighten(kLast, kZero, Ticks(*region.hi));
      if (!node.zone.Close()) return Entered<Frame>::Nothing();
    }
    auto [tried, added] = seen_.try_emplace(node.Key(), Tried{node.zone, {}});
    if (!added) {
      if (node.zone.Within(tried->second.first)) return Entered<Frame>::Nothing();
      for (const Dbm<3>& z : tried->second.more) {
        if (node.zone.Within(z)) return Entered<Frame>::Nothing();
      }
      tried->second.more.push_back(node.zone);
    }
    steps_.Take();
    Frame f{std::move(node), {}, region.blocking, *region.hi};
    // Where a denial left holds at the first instant it can take, it goes next, alone, there: in
    // any order of the calls left it can be moved to the front, leaving every other call's instant
    // and answer as they were. The zone is cut into the part where it holds and the rest (where
    // the last instant is before it was sent, or where a token is left), each rest looked at again
    // for the denials after it in the order sent (a denial that does not hold at its first instant
    // holds nowhere before an admission); what no denial holds in is tried as usual.
    const int64_t sent_first = Ticks(Op(f.node.placed.first).invoke);
    std::vector<std::pair<Dbm<3>, size_t>> work = {{f.node.zone, 0}};  // a part, the next denial
    std::vector<Dbm<3>> rest;
    size_t parts = 0;
    for (size_t w = 0; w < work.size(); ++w) {
      auto [r, from] = work[w];
      if (RaiseSecond(r, f.node.full, sent_first)) from = 0;  // moved up: every denial again
      bool cut = false;
      for (size_t k = from; k < region.calls.size() && parts < kMostParts && !cut; ++k) {
        const size_t i = region.calls[k];
        const LinearOp& op = Op(i);
        if (!op.answer || op.answer->allowed) continue;
        const std::optional<Few<Bound, 2>> holds = DenialHolds(f.node, op);
        if (!holds) continue;
        Dbm<3> all = r;
        for (const Bound& b : *holds) all.Tighten(b.i, b.j, b.bound);
        if (!all.Close()) continue;
        cut = true;
        ++parts;
        const Step step{i, Effect::kDenied, true};
        if (std::optional<Placed> p = Place(f.node, all, step, *region.hi)) {
          f.choices.push_back(Choice{step, std::move(p->next)});
        }
        // Where the first j bounds hold and the next does not.
        Dbm<3> part = r;
        for (const Bound& b : *holds) {
          Dbm<3> fails = part;
          const Bound n = b.Negated();
          fails.Tighten(n.i, n.j, n.bound);
          if (fails.Close()) work.push_back({fails, k + 1});
          part.Tighten(b.i, b.j, b.bound);
        }
      }
      if (!cut) rest.push_back(r);
    }
    for (const Dbm<3>& r : rest) {
      for (const size_t i : region.calls) {
        for (const Step& step : StepsOf(i)) {
          if (std::optional<Placed> p = Place(f.node, r, step, *region.hi)) {
            f.choices.push_back(Choice{step, std::move(p->next)});
          }
        }
      }
    }
    return Entered<Frame>::Open(std::move(f));
  }
  // Choice `k` of `f` followed.
  std::pair<Step, Node> Take(Frame& f, size_t k) {
    Choice& c = f.choices[k];
    return {c.step, std::move(c.next)};
  }
  // Whether the blocking call cannot follow `f`'s node: no way of placing it fits its zone.
  bool CannotFollow(const Frame& f) {
    bool fits = false;
    for (const Step& step : StepsOf(*f.blocking)) {
      fits = fits || Place(f.node, f.node.zone, step, f.hi).has_value();
    }
    return !fits;
  }
  std::vector<LinearStep> Order(const std::vector<Step>& steps) { return Instants(steps); }
  bool Exact() const { return true; }
  size_t Index(size_t position) const { return calls_.Index(position); }
  const SearchSteps& steps() const { return steps_; }

 private:
  const LinearOp& Op(size_t position) const { return calls_[position]; }
  int64_t Ticks(Instant t) const { return FloorDiv(ToUnixNanos(t) - origin_, tick_); }
  bool Admissible(int64_t cost) const { return credit_ || cost <= limit_; }
  // The most F may be ahead of a call's instant for the call to be admitted.
  int64_t Slack(int64_t cost) const { return (limit_ - (credit_ ? 1 : cost)) * period_; }
  bool HasSecond() const { return clock_ != Clock::kClient; }

  Node Root() const {
    Node root;
    root.zone = Dbm<3>::Unbounded();
    if (HasSecond()) root.zone.m[kLast][kZero] = root.zone.m[kZero][kLast] = 0;  // before all
    return root;
  }

  // The instants a call can decide at: on the store's clock no later than `hi`; on the client's
  // any its interval shows (without an answer, up to the history's last instant), or the one it
  // was sent at where its client read the time then.
  std::pair<int64_t, int64_t> Interval(const LinearOp& op, Instant hi) const {
    return {Ticks(op.invoke), Ticks(LatestInstant(op, options_, hi, calls_.last()))};
  }

  // Call `position` placed next from `from`, in the part `zone` of its zone, as `step` says, the
  // calls left answered from `hi` on: none when no instant of the zone allows it.
  std::optional<Placed> Place(const Node& from, const Dbm<3>& zone, const Step& step, Instant hi) {
    steps_.Take();
    const LinearOp& op = Op(step.position);
    const Effect effect = step.effect;
    if (op.answer && op.answer->allowed != (effect != Effect::kDenied)) return std::nullopt;
    const int64_t cost = op.cost;
    Placed p;
    Dbm<4>& m = p.instants;
    m = Dbm<4>::Unbounded();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m.m[i][j] = zone.m[i][j];
    }
    const auto [lo, up] = Interval(op, hi);
    m.Tighten(kZero, kNew, -lo);
    m.Tighten(kNew, kZero, up);
    if (clock_ == Clock::kStore) m.Tighten(kLast, kNew, 0);  // in the order they take effect
    if (step.at_first) {
      if (clock_ == Clock::kStore)
        m.Tighten(kNew, kLast, 0);
      else
        m.Tighten(kNew, kZero, lo);
    }
    // The instant the call decides at: its own, or M where it is before M.
    int decides = kNew;
    if (clock_ == Clock::kClientLatest && effect != Effect::kDenied) {
      if (step.before_latest) {
        m.Tighten(kNew, kLast, 0);
        decides = kLast;
      } else {
        m.Tighten(kLast, kNew, 0);
      }
    }
    const bool admissible = Admissible(cost);
    switch (effect) {
      case Effect::kDenied:
        if (admissible) {
          if (from.full) return std::nullopt;
          m.Tighten(kNew, kFullAt, -(Slack(cost) + 1));  // F - t > D
          // at M too (max(t, M): both must be short)
          if (clock_ == Clock::kClientLatest) m.Tighten(kLast, kFullAt, -(Slack(cost) + 1));
        }
        break;
      case Effect::kAdmittedBeforeFull:
        if (!admissible || from.full) return std::nullopt;
        m.Tighten(kFullAt, decides, Slack(cost));  // F - t <= D
        m.Tighten(decides, kFullAt, 0);            // t <= F
        break;
      case Effect::kAdmittedWhenFull:
        if (!admissible) return std::nullopt;
        if (!from.full) m.Tighten(kFullAt, decides, 0);  // F <= t (so F - t <= D)
        break;
    }
    if (!m.Close()) return std::nullopt;
    // The node after: F and the second variable, each some variable of `m`.
    switch (effect) {
      case Effect::kDenied:
        if (!from.full) p.full_at_from = kFullAt;
        break;
      case Effect::kAdmittedBeforeFull:
        p.full_at_from = kFullAt;
        p.shift = cost * period_;
        break;
      case Effect::kAdmittedWhenFull:
        p.full_at_from = decides;
        p.shift = cost * period_;
        break;
    }
    if (clock_ == Clock::kStore) p.second_from = kNew;
    if (clock_ == Clock::kClientLatest) {
      p.second_from = effect == Effect::kDenied ? kLast : decides;  // M moves to what it decided at
    }
    Node& n = p.next;
    n.full = !p.full_at_from;
    n.zone = Dbm<3>::Unbounded();
    const std::array<std::optional<int>, 3> from_var = {kZero, p.full_at_from, p.second_from};
    const std::array<int64_t, 3> shift = {0, p.shift, 0};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        if (i != j && from_var[i] && from_var[j]) {
          n.zone.m[i][j] = Plus(m.m[*from_var[i]][*from_var[j]], shift[i] - shift[j]);
        }
      }
    }
    n.placed = from.placed.With(step.position);
    if (n.placed.first == calls_.size()) return p;
    // Every call left is sent no sooner than `sent`, so decides no sooner than it (nor, but on
    // GCRA's client clock, than the second variable): where F is behind that, wherever the zone
    // is, the bucket is full from every instant left; and where the second variable is behind
    // `sent`, only `sent` matters.
    const int64_t sent = Ticks(Op(n.placed.first).invoke);
    if (!n.full &&
        ((HasSecond() && n.zone.m[kFullAt][kLast] <= 0) || n.zone.m[kFullAt][kZero] <= sent)) {
      n.full = true;
      n.zone.Drop(kFullAt);
      p.full_at_from.reset();
    }
    if (RaiseSecond(n.zone, n.full, sent)) p.second_from.reset();
    return p;
  }

  // Where the second variable is no later than `sent` (the first instant any call left was sent
  // at) wherever `zone` is, it becomes `sent`: every call left decides no sooner, so only `sent`
  // matters. Whether it moved.
  bool RaiseSecond(Dbm<3>& zone, bool full, int64_t sent) const {
    if (!HasSecond() || zone.m[kLast][kZero] > sent) return false;
    if (zone.m[kZero][kLast] == -sent) return false;  // already there
    zone.m[kLast][kZero] = sent;
    zone.m[kZero][kLast] = -sent;
    if (!full) {
      zone.m[kFullAt][kLast] = Plus(zone.m[kFullAt][kZero], -sent);
      zone.m[kLast][kFullAt] = Plus(zone.m[kZero][kFullAt], sent);
    }
    return true;
  }

  // The ways a call can be placed: its answer's, or (no answer) any; an admission on a token
  // bucket's client clock at or after M, or before it. An admission is tried at or after F (the
  // bucket full, F pinned to its instant) before it is tried while F is ahead: the order only
  // says which is looked at first, and on the probes' races recorded on a loaded machine it is
  // the one that finds their order sooner (4.97 M steps to 1.52 M on the hardest, 175 163 to
  // 79 212 on the benchmark's race).
  Few<Step, 5> StepsOf(size_t position) const {
    const LinearOp& op = Op(position);
    Few<Step, 5> out;
    const auto admitted = [&] {
      for (const bool before : {false, true}) {
        if (before && clock_ != Clock::kClientLatest) continue;
        for (const Effect e : {Effect::kAdmittedWhenFull, Effect::kAdmittedBeforeFull}) {
          out.push_back(Step{position, e, false, before});
        }
      }
    };
    if (!op.answer || op.answer->allowed) admitted();
    if (!op.answer || !op.answer->allowed) out.push_back(Step{position, Effect::kDenied});
    return out;
  }

  // Where denial `op` holds at the first instant it can take (on the store's clock the last
  // call's, which it must have been sent by; on the client's its own first), as bounds on the
  // zone; none where it holds nowhere (a full bucket, its cost admissible).
  std::optional<Few<Bound, 2>> DenialHolds(const Node& node, const LinearOp& op) const {
    Few<Bound, 2> out;
    const int64_t lo = Ticks(op.invoke);
    if (clock_ == Clock::kStore) out.push_back(Bound{kZero, kLast, -lo});  // l >= sent
    if (!Admissible(op.cost)) return out;
    if (node.full) return std::nullopt;
    const int64_t short_by = -(Slack(op.cost) + 1);  // t - F <= -(D + 1)
    if (clock_ == Clock::kStore) {
      out.push_back(Bound{kLast, kFullAt, short_by});
    } else {
      out.push_back(Bound{kZero, kFullAt, short_by - lo});
      if (clock_ == Clock::kClientLatest) out.push_back(Bound{kLast, kFullAt, short_by});
    }
    return out;
  }

  // The most parts a zone is cut into by the denials that go alone.
  static constexpr size_t kMostParts = 8;

  // The instant each of `steps` can take effect at: the zones of the steps replayed, then an
  // instant chosen in each from the last back, each where the choices after it need it.
  std::vector<LinearStep> Instants(const std::vector<Step>& steps) {
    std::vector<Placed> placed;
    Node node = Root();
    for (Step s : steps) {
      // Its zone as placed before, or one around it (a denial that went alone went at an instant
      // the part it was placed from raised, which the whole zone places it at or after).
      s.at_first = false;
      std::optional<Placed> p = Place(node, node.zone, s, *calls_.RegionAfter(node.placed).hi);
      if (!p) break;  // not reached: each step was placed so before
      node = p->next;
      placed.push_back(*std::move(p));
    }
    std::vector<LinearStep> out(placed.size());
    std::optional<int64_t> full_at;  // F after the step being solved, as the steps after chose
    std::optional<int64_t> second;   // and its second variable
    for (size_t k = placed.size(); k-- > 0;) {
      const Placed& p = placed[k];
      const Dbm<4>& m = p.instants;
      std::array<std::optional<int64_t>, 4> v{int64_t{0}, std::nullopt, std::nullopt, std::nullopt};
      if (full_at && p.full_at_from) v[*p.full_at_from] = *full_at - p.shift;
      if (second && p.second_from) v[*p.second_from] = *second;
      for (const int var : {int{kNew}, int{kFullAt}, int{kLast}}) {
        if (v[var] || (m.m[var][kZero] >= kInf && m.m[kZero][var] >= kInf)) continue;
        int64_t lo = -kInf;
        for (int s = 0; s < 4; ++s) {
          if (v[s] && m.m[s][var] < kInf) lo = std::max(lo, *v[s] - m.m[s][var]);
        }
        v[var] = lo;  // the earliest instant the zone and the choices so far allow
      }
      out[k] = LinearStep{calls_.Index(steps[k].position),
                          Instant(Duration(origin_ + *v[kNew] * tick_))};
      full_at = v[kFullAt];
      second = v[kLast];
    }
    return out;
  }

  SentCalls calls_;
  const LinearizabilityOptions& options_;  // the instants a call can take effect at
  Clock clock_;
  SearchSteps steps_;
  int64_t tick_;        // the clock's resolution, ns
  int64_t origin_ = 0;  // the first call's sending, as the clock shows it, ns
  int64_t period_ = 0;  // T, ticks
  int64_t limit_ = 0;   // B
  bool credit_ = false;
  // The zones tried with each set of calls placed (most sets have one).
  struct Tried {
    Dbm<3> first;
    std::vector<Dbm<3>> more;
  };
  std::unordered_map<std::pair<uint64_t, uint64_t>, Tried, PairHash> seen_;
};

// Whether the model of `policy` is a bucket, and how it decides (key_model.h).
Zones ZonesOf(const Policy& policy) {
  return WithKeyModel(policy.algorithm, []<KeyModel M>() { return M::kZones; });
}

}  // namespace

bool BucketZonesApply(const Policy& policy, std::span<const LinearOp> ops,
                      const LinearizabilityOptions& options) {
  if (ZonesOf(policy) == Zones::kNone || options.remaining || options.retry_after || ops.empty())
    return false;
  const int64_t tick = options.resolution.count();
  if (policy.window.count() % tick != 0) return false;
  // F moves on by at most every cost's refill: kept far from the bounds of 64 bits.
  Int128 refills = 0;
  for (const LinearOp& op : ops) refills += Int128{op.cost} * policy.window.count();
  if (refills > Int128{1} << 58) return false;
  if (!options.instants_follow_order) return true;
  // On the store's clock a call seen at a tick decided at some instant inside it, in the order
  // of effect: exact only where the intervals hold whole ticks.
  const auto whole = [&](Instant t) { return ToUnixNanos(t) % tick == 0; };
  return std::all_of(ops.begin(), ops.end(), [&](const LinearOp& op) {
    return whole(op.invoke) && (!op.answer || whole(op.complete));
  });
}

KeyLinearizability CheckBucketByZones(const Policy& policy, std::span<const LinearOp> ops,
                                      const LinearizabilityOptions& options, int64_t budget) {
  const Clock clock = options.instants_follow_order                     ? Clock::kStore
                      : ZonesOf(policy) == Zones::kBucketAtGivenInstant ? Clock::kClient
                                                                        : Clock::kClientLatest;
  return ZoneSpace(policy, ops, options, clock, options.resolution.count(), budget).Run();
}

}  // namespace ratelab
