#include "model/bucket_zones.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/state_hash.h"

namespace ratelab {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;  // no bound

int64_t Plus(int64_t a, int64_t b) { return a >= kInf || b >= kInf ? kInf : a + b; }

// The instants of a zone: x0 is zero, then F (when the bucket is full again), the instant of the
// last call placed, and the call being placed.
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

// How a placed call took effect: denied (F unchanged), admitted while F was ahead of its instant
// (F moves on by its cost), or admitted at or after F (the bucket was full: F is its instant
// plus its cost).
enum class Effect { kDenied, kAdmittedBeforeFull, kAdmittedWhenFull };

class ZoneSearch {
 public:
  ZoneSearch(const Policy& policy, std::span<const LinearOp> ops, int64_t tick, int64_t budget)
      : ops_(ops), budget_(budget), sorted_(ops.size()), tick_(tick) {
    std::iota(sorted_.begin(), sorted_.end(), size_t{0});
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](size_t a, size_t b) { return ops[a].invoke < ops[b].invoke; });
    origin_ = ToUnixNanos(ops_[sorted_.front()].invoke);
    period_ = policy.window.count() / tick;
    limit_ = policy.limit;
    credit_ = CreditOf(policy) == BucketCredit::kOneToken;
  }

  KeyLinearizability Run() {
    Node root;
    root.zone = Dbm<3>::Unbounded();
    root.zone.m[kLast][kZero] = root.zone.m[kZero][kLast] = 0;  // every call is sent after it
    if (Enter(root)) return Done(LinearVerdict::kLinearizable);
    while (!stack_.empty()) {
      if (states_ > budget_) return Done(LinearVerdict::kUnknown);
      Frame& f = stack_.back();
      if (f.next == f.choices.size()) {
        Failed(f);
        stack_.pop_back();
        if (!path_.empty()) path_.pop_back();
        continue;
      }
      Choice& c = f.choices[f.next++];
      const size_t depth = stack_.size();
      path_.push_back(c.step);
      if (Enter(std::move(c.placed.next))) return Done(LinearVerdict::kLinearizable);
      if (stack_.size() == depth) path_.pop_back();  // not entered: inside a zone tried before
    }
    return Done(states_ > budget_ ? LinearVerdict::kUnknown : LinearVerdict::kNotLinearizable);
  }

 private:
  // Which calls are placed (every one of sorted position below `first`, and `ahead`), whether the
  // bucket is full from every instant a call left can take effect at, and the zone of F (unless
  // full) and of the last call's instant (no later than any call left can take effect at).
  struct Node {
    bool full = true;
    Dbm<3> zone;
    size_t first = 0;
    std::vector<size_t> ahead;  // sorted positions above `first` placed, ascending

    std::pair<uint64_t, uint64_t> Key() const {
      StateHash h;
      h.Add(int64_t{full});
      h.Add(static_cast<uint64_t>(first));
      for (const size_t a : ahead) h.Add(static_cast<uint64_t>(a));
      return h.value();
    }
  };
  struct Step {
    size_t position = 0;  // the call's sorted position
    Effect effect = Effect::kDenied;
    bool at_last = false;  // at the last call's instant
  };
  // A call placed: the zone of the instants before it and its own (closed), and the node after.
  struct Placed {
    Dbm<4> instants;
    Node next;
    bool forgotten = false;    // F was dropped: the bucket is full from every instant left
    bool last_pinned = false;  // the last instant became the first a call left can be sent at
  };
  struct Choice {
    Step step;
    Placed placed;
  };
  struct Frame {
    Node node;
    std::vector<Choice> choices;
    size_t next = 0;
    std::optional<size_t> blocking;  // the answered call left that is answered first
  };
  // The calls that can go next (sent before every call left was answered) and `hi`, the first
  // answer among those left; no `hi` when every answered call is placed.
  struct Region {
    std::vector<size_t> calls;
    std::optional<int64_t> hi;
    std::optional<size_t> blocking;
  };

  const LinearOp& Op(size_t position) const { return ops_[sorted_[position]]; }
  int64_t Ticks(Instant t) const { return (ToUnixNanos(t) - origin_) / tick_; }
  static bool IsPlaced(const Node& n, size_t position) {
    return position < n.first || std::binary_search(n.ahead.begin(), n.ahead.end(), position);
  }
  bool Admissible(int64_t cost) const { return credit_ || cost <= limit_; }
  // The most F may be ahead of a call's instant for the call to be admitted.
  int64_t Slack(int64_t cost) const { return (limit_ - (credit_ ? 1 : cost)) * period_; }

  Region RegionOf(const Node& n) const {
    Region r;
    for (size_t i = n.first; i < sorted_.size() && (!r.hi || Ticks(Op(i).invoke) <= *r.hi); ++i) {
      if (IsPlaced(n, i)) continue;
      if (Op(i).answer && (!r.hi || Ticks(Op(i).complete) < *r.hi)) {
        r.hi = Ticks(Op(i).complete);
        r.blocking = i;
      }
      r.calls.push_back(i);
    }
    return r;
  }

  // Call `position` placed next from `from`, taking effect as `effect` says (at the last call's
  // instant when `at_last`), no later than `hi`: none when no instant of the zone allows it.
  std::optional<Placed> Place(const Node& from, size_t position, Effect effect, int64_t hi,
                              bool at_last = false) {
    ++states_;
    const LinearOp& op = Op(position);
    if (op.answer && op.answer->allowed != (effect != Effect::kDenied)) return std::nullopt;
    const int64_t cost = op.cost;
    const int64_t cost_ticks = cost * period_;
    Placed p;
    Dbm<4>& m = p.instants;
    m = Dbm<4>::Unbounded();
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) m.m[i][j] = from.zone.m[i][j];
    }
    m.Tighten(kZero, kNew, -Ticks(op.invoke));
    m.Tighten(kNew, kZero, op.answer ? std::min(Ticks(op.complete), hi) : hi);
    m.Tighten(kLast, kNew, 0);  // the instants follow the order the calls take effect in
    if (at_last) m.Tighten(kNew, kLast, 0);
    const bool admissible = Admissible(cost);
    switch (effect) {
      case Effect::kDenied:
        if (admissible) {
          if (from.full) return std::nullopt;
          m.Tighten(kNew, kFullAt, -(Slack(cost) + 1));  // F - t > D
        }
        break;
      case Effect::kAdmittedBeforeFull:
        if (!admissible || from.full) return std::nullopt;
        m.Tighten(kFullAt, kNew, Slack(cost));  // F - t <= D
        m.Tighten(kNew, kFullAt, 0);            // t <= F
        break;
      case Effect::kAdmittedWhenFull:
        if (!admissible) return std::nullopt;
        if (!from.full) m.Tighten(kFullAt, kNew, 0);  // F <= t (so F - t <= D)
        break;
    }
    if (!m.Close()) return std::nullopt;
    Node& n = p.next;
    n.zone = Dbm<3>::Unbounded();
    n.zone.m[kLast][kZero] = m.m[kNew][kZero];
    n.zone.m[kZero][kLast] = m.m[kZero][kNew];
    switch (effect) {
      case Effect::kDenied:
        n.full = from.full;
        if (!n.full) {
          n.zone.m[kFullAt][kZero] = m.m[kFullAt][kZero];
          n.zone.m[kZero][kFullAt] = m.m[kZero][kFullAt];
          n.zone.m[kFullAt][kLast] = m.m[kFullAt][kNew];
          n.zone.m[kLast][kFullAt] = m.m[kNew][kFullAt];
        }
        break;
      case Effect::kAdmittedBeforeFull:
        n.full = false;
        n.zone.m[kFullAt][kZero] = Plus(m.m[kFullAt][kZero], cost_ticks);
        n.zone.m[kZero][kFullAt] = Plus(m.m[kZero][kFullAt], -cost_ticks);
        n.zone.m[kFullAt][kLast] = Plus(m.m[kFullAt][kNew], cost_ticks);
        n.zone.m[kLast][kFullAt] = Plus(m.m[kNew][kFullAt], -cost_ticks);
        break;
      case Effect::kAdmittedWhenFull:
        n.full = false;
        n.zone.m[kFullAt][kZero] = Plus(m.m[kNew][kZero], cost_ticks);
        n.zone.m[kZero][kFullAt] = Plus(m.m[kZero][kNew], -cost_ticks);
        n.zone.m[kFullAt][kLast] = cost_ticks;
        n.zone.m[kLast][kFullAt] = -cost_ticks;
        break;
    }
    n.first = from.first;
    n.ahead = from.ahead;
    n.ahead.insert(std::upper_bound(n.ahead.begin(), n.ahead.end(), position), position);
    size_t drop = 0;
    while (drop < n.ahead.size() && n.ahead[drop] == n.first) {
      ++n.first;
      ++drop;
    }
    n.ahead.erase(n.ahead.begin(), n.ahead.begin() + static_cast<ptrdiff_t>(drop));
    if (n.first == sorted_.size()) return p;
    // Every call left is sent no sooner than `sent`, so takes effect no sooner than it: where F
    // is behind it, or behind the last instant, wherever the zone is, the bucket is full from
    // every instant left; and where the last instant is behind it, only `sent` matters.
    const int64_t sent = Ticks(Op(n.first).invoke);
    if (!n.full && (n.zone.m[kFullAt][kLast] <= 0 || n.zone.m[kFullAt][kZero] <= sent)) {
      n.full = true;
      n.zone.Drop(kFullAt);
      p.forgotten = true;
    }
    if (n.zone.m[kLast][kZero] <= sent) {
      n.zone.m[kLast][kZero] = sent;
      n.zone.m[kZero][kLast] = -sent;
      if (!n.full) {
        n.zone.m[kFullAt][kLast] = Plus(n.zone.m[kFullAt][kZero], -sent);
        n.zone.m[kLast][kFullAt] = Plus(n.zone.m[kZero][kFullAt], sent);
      }
      p.last_pinned = true;
    }
    return p;
  }

  // The effects a call can be placed with: its answer's, or (no answer) any.
  static std::vector<Effect> EffectsOf(const LinearOp& op) {
    if (!op.answer) {
      return {Effect::kAdmittedBeforeFull, Effect::kAdmittedWhenFull, Effect::kDenied};
    }
    if (op.answer->allowed) return {Effect::kAdmittedBeforeFull, Effect::kAdmittedWhenFull};
    return {Effect::kDenied};
  }

  // Pushes the frame of `node` with its choices; true when nothing answered is left to place (a
  // linearization); false too when its zone is inside one tried with the same calls placed.
  bool Enter(Node node) {
    const Region region = RegionOf(node);
    if (!region.hi) return true;
    // Every answered call left takes effect at or after the last instant: a later one is dead.
    node.zone.Tighten(kLast, kZero, *region.hi);
    if (!node.zone.Close()) return false;
    std::vector<Dbm<3>>& tried = seen_[node.Key()];
    for (const Dbm<3>& z : tried) {
      if (node.zone.Within(z)) return false;
    }
    tried.push_back(node.zone);
    ++states_;
    Frame f{std::move(node), {}, 0, region.blocking};
    // Where a denial left holds at the last instant (sent by then, and the bucket short of its
    // cost there), it goes next, alone, at that instant: in any order of the calls left it can
    // be moved to the front, leaving every other call's instant and answer as they were. The
    // zone is cut into the part where it holds and the rest, the rest tried as usual (a denial
    // that does not hold at the last instant holds at no later one before an admission).
    std::vector<Dbm<3>> rest = {f.node.zone};
    for (const size_t i : region.calls) {
      const LinearOp& op = Op(i);
      if (!op.answer || op.answer->allowed || rest.size() > kMostPieces) continue;
      const bool admissible = Admissible(op.cost);
      if (admissible && f.node.full) continue;
      const int64_t sent = Ticks(op.invoke);
      std::vector<Dbm<3>> left;
      for (const Dbm<3>& r : rest) {
        Dbm<3> holds = r;
        holds.Tighten(kZero, kLast, -sent);
        if (admissible) holds.Tighten(kLast, kFullAt, -(Slack(op.cost) + 1));
        if (holds.Close()) {
          Node at = f.node;
          at.zone = holds;
          if (std::optional<Placed> p = Place(at, i, Effect::kDenied, *region.hi, true)) {
            f.choices.push_back(Choice{Step{i, Effect::kDenied, true}, *std::move(p)});
          }
        } else {
          left.push_back(r);
          continue;
        }
        Dbm<3> before = r;  // the last instant before it was sent
        before.Tighten(kLast, kZero, sent - 1);
        if (before.Close()) left.push_back(before);
        if (admissible) {
          Dbm<3> token = r;  // sent by then, and a token left there
          token.Tighten(kZero, kLast, -sent);
          token.Tighten(kFullAt, kLast, Slack(op.cost));
          if (token.Close()) left.push_back(token);
        }
      }
      rest = std::move(left);
    }
    for (const Dbm<3>& r : rest) {
      Node at = f.node;
      at.zone = r;
      for (const size_t i : region.calls) {
        for (const Effect e : EffectsOf(Op(i))) {
          if (std::optional<Placed> p = Place(at, i, e, *region.hi)) {
            f.choices.push_back(Choice{Step{i, e}, *std::move(p)});
          }
        }
      }
    }
    stack_.push_back(std::move(f));
    return false;
  }
  // The most parts a zone is cut into by the denials that go alone.
  static constexpr size_t kMostPieces = 4;

  // A frame whose every choice failed: the deepest such is the longest linearizable prefix.
  void Failed(const Frame& f) {
    if (best_ && path_.size() <= best_->size()) return;
    best_ = path_;
    stuck_ = f.blocking ? std::optional<size_t>(sorted_[*f.blocking]) : std::nullopt;
    stuck_cannot_follow_ = false;
    if (!f.blocking) return;
    const Region region = RegionOf(f.node);
    bool fits = false;
    for (const Effect e : EffectsOf(Op(*f.blocking))) {
      fits = fits || Place(f.node, *f.blocking, e, *region.hi).has_value();
    }
    stuck_cannot_follow_ = !fits;
  }

  // The instant each of `steps` can take effect at: the zones of the steps replayed, then an
  // instant chosen in each from the last back, each where the choices after it need it.
  std::vector<LinearStep> Instants(const std::vector<Step>& steps) {
    std::vector<Placed> placed;
    Node node;
    node.zone = Dbm<3>::Unbounded();
    node.zone.m[kLast][kZero] = node.zone.m[kZero][kLast] = 0;
    for (const Step& s : steps) {
      std::optional<Placed> p = Place(node, s.position, s.effect, *RegionOf(node).hi, s.at_last);
      if (!p) break;  // not reached: each step was placed so before
      node = p->next;
      placed.push_back(*std::move(p));
    }
    std::vector<LinearStep> out(placed.size());
    std::optional<int64_t> full_at;  // F after the step being solved, as the steps after chose
    std::optional<int64_t> last;     // and its last instant
    for (size_t k = placed.size(); k-- > 0;) {
      const Placed& p = placed[k];
      const int64_t cost_ticks = Op(steps[k].position).cost * period_;
      std::array<std::optional<int64_t>, 4> v{int64_t{0}, std::nullopt, std::nullopt, std::nullopt};
      if (last && !p.last_pinned) v[kNew] = *last;
      if (full_at && !p.next.full) {
        switch (steps[k].effect) {
          case Effect::kDenied:
            v[kFullAt] = *full_at;
            break;
          case Effect::kAdmittedBeforeFull:
            v[kFullAt] = *full_at - cost_ticks;
            break;
          case Effect::kAdmittedWhenFull:
            v[kNew] = *full_at - cost_ticks;
            break;
        }
      }
      const bool had_full_at = p.instants.m[kFullAt][kZero] < kInf;
      for (const int var : {int{kNew}, int{kFullAt}, int{kLast}}) {
        if (v[var] || (var == kFullAt && !had_full_at)) continue;
        int64_t lo = -kInf;
        for (int s = 0; s < 4; ++s) {
          if (v[s] && p.instants.m[s][var] < kInf) lo = std::max(lo, *v[s] - p.instants.m[s][var]);
        }
        v[var] = lo;  // the earliest instant the zone and the choices so far allow
      }
      out[k] =
          LinearStep{sorted_[steps[k].position], Instant(Duration(origin_ + *v[kNew] * tick_))};
      full_at = had_full_at ? v[kFullAt] : std::nullopt;
      last = v[kLast];
    }
    return out;
  }

  KeyLinearizability Done(LinearVerdict verdict) {
    KeyLinearizability out;
    out.verdict = verdict;
    out.states = states_;
    if (verdict == LinearVerdict::kLinearizable) {
      out.order = Instants(path_);
    } else {
      out.order = Instants(best_.value_or(std::vector<Step>{}));
      out.stuck = stuck_;
      out.stuck_cannot_follow = stuck_cannot_follow_;
    }
    return out;
  }

  std::span<const LinearOp> ops_;
  int64_t budget_;
  std::vector<size_t> sorted_;  // the calls' indices in the order they were sent
  int64_t tick_;                // the clock's resolution, ns
  int64_t origin_ = 0;          // the first call's sending, ns: every instant is ticks from it
  int64_t period_ = 0;          // T, ticks
  int64_t limit_ = 0;           // B
  bool credit_ = false;
  std::unordered_map<std::pair<uint64_t, uint64_t>, std::vector<Dbm<3>>, PairHash> seen_;
  std::vector<Frame> stack_;
  std::vector<Step> path_;  // the choice that led to each frame above the first
  int64_t states_ = 0;
  std::optional<std::vector<Step>> best_;
  std::optional<size_t> stuck_;
  bool stuck_cannot_follow_ = false;
};

}  // namespace

std::optional<KeyLinearizability> CheckBucketByZones(const Policy& policy,
                                                     std::span<const LinearOp> ops,
                                                     const LinearizabilityOptions& options,
                                                     int64_t budget) {
  const bool bucket = policy.algorithm == Algorithm::kTokenBucket ||
                      policy.algorithm == Algorithm::kTokenBucketCredit ||
                      policy.algorithm == Algorithm::kGcra;
  if (!bucket || !options.instants_follow_order || options.remaining || options.retry_after ||
      ops.empty()) {
    return std::nullopt;
  }
  const int64_t tick = options.resolution.count();
  const auto whole = [&](Instant t) { return ToUnixNanos(t) % tick == 0; };
  if (policy.window.count() % tick != 0) return std::nullopt;
  for (const LinearOp& op : ops) {
    if (!whole(op.invoke) || (op.answer && !whole(op.complete))) return std::nullopt;
  }
  return ZoneSearch(policy, ops, tick, budget).Run();
}

}  // namespace ratelab
