#include "model/linearizability.h"

#include <algorithm>
#include <compare>
#include <map>
#include <numeric>
#include <set>
#include <string_view>

#include "model/anchored_window_model.h"
#include "model/fixed_window_model.h"
#include "model/gcra_model.h"
#include "model/sliding_counter_model.h"
#include "model/sliding_log_model.h"
#include "model/token_bucket_intervals_model.h"
#include "model/token_bucket_model.h"

namespace ratelab {

std::string_view LinearVerdictName(LinearVerdict verdict) {
  switch (verdict) {
    case LinearVerdict::kLinearizable:
      return "linearizable";
    case LinearVerdict::kNotLinearizable:
      return "not linearizable";
    case LinearVerdict::kUnknown:
      return "unknown";
  }
  return "unknown";
}

namespace {

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

// The search over the calls of one key, for the model whose per-key state is `State`.
template <typename State>
class LinearSearch {
 public:
  LinearSearch(const Policy& policy, std::span<const LinearOp> ops,
               const LinearizabilityOptions& options)
      : policy_(policy), ops_(ops), options_(options), sorted_(ops.size()) {
    std::iota(sorted_.begin(), sorted_.end(), size_t{0});
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](size_t a, size_t b) { return ops[a].invoke < ops[b].invoke; });
  }

  KeyLinearizability Run() {
    const Instant start = ops_.empty() ? Instant{} : Op(0).invoke;
    if (Enter(Node{State(), start, 0, {}})) return Done(LinearVerdict::kLinearizable);
    while (!stack_.empty()) {
      if (states_ > options_.max_states) return Done(LinearVerdict::kUnknown);
      Frame& f = stack_.back();
      if (f.next == f.choices.size()) {
        Failed(f);
        stack_.pop_back();
        if (!path_.empty()) path_.pop_back();
        continue;
      }
      const Choice c = f.choices[f.next++];
      Node child = Place(f.node, c);
      const size_t depth = stack_.size();
      path_.push_back(LinearStep{sorted_[c.op], c.seen});
      if (Enter(std::move(child))) return Done(LinearVerdict::kLinearizable);
      if (stack_.size() == depth) path_.pop_back();  // not entered: a state seen before
    }
    return Done(states_ > options_.max_states ? LinearVerdict::kUnknown
                                              : LinearVerdict::kNotLinearizable);
  }

 private:
  // Where the search is: the model's state, the earliest instant the next call can take effect
  // at, and which calls are placed (every one of sorted position below `first`, and `ahead`).
  struct Node {
    State state;
    Instant real_lo{};
    size_t first = 0;
    std::vector<size_t> ahead;  // sorted positions above `first` placed, ascending
    auto operator<=>(const Node&) const = default;
  };
  // A call to place next (by sorted position), at the instant the limiter saw.
  struct Choice {
    size_t op = 0;
    Instant seen{};
    Instant real{};
  };
  struct Frame {
    Node node;
    std::vector<Choice> choices;
    size_t next = 0;
    std::optional<size_t> blocking;  // the answered call left that is answered first
  };

  const LinearOp& Op(size_t position) const { return ops_[sorted_[position]]; }
  static bool Placed(const Node& n, size_t position) {
    return position < n.first || std::binary_search(n.ahead.begin(), n.ahead.end(), position);
  }

  // Pushes the frame of `node` with its choices; true when nothing answered is left to place
  // (the calls left without an answer may never have taken effect): a linearization.
  bool Enter(Node node) {
    if (!seen_.insert(node).second) return false;
    ++states_;
    Frame f{std::move(node), {}, 0, std::nullopt};
    // The calls that can go next: those sent before every call left was answered.
    std::optional<Instant> hi;
    std::vector<size_t> region;
    for (size_t i = f.node.first; i < sorted_.size() && (!hi || Op(i).invoke <= *hi); ++i) {
      if (Placed(f.node, i)) continue;
      region.push_back(i);
      if (Op(i).answer && (!hi || Op(i).complete < *hi)) {
        hi = Op(i).complete;
        f.blocking = i;
      }
    }
    if (!hi) return true;
    for (const size_t i : region) {
      const LinearOp& op = Op(i);
      if (op.invoke > *hi) continue;
      const Instant lo = std::max(f.node.real_lo, op.invoke);
      const Instant up = op.answer ? std::min(op.complete, *hi) : *hi;
      if (lo > up) continue;
      std::optional<State> last;  // the state the last instant kept leaves
      for (Instant seen = Floor(lo, options_.resolution); seen <= up; seen += options_.resolution) {
        if (++states_ > options_.max_states) break;
        const Decision d = f.node.state.Peek(policy_, seen, op.cost);
        if (op.answer && !Matches(d, *op.answer, options_)) continue;
        State next = After(f.node.state, d, seen, op.cost);
        if (last && *last == next) continue;  // the earlier instant does the same, with more room
        last = std::move(next);
        f.choices.push_back(Choice{i, seen, std::max(lo, seen)});
      }
    }
    stack_.push_back(std::move(f));
    return false;
  }

  State After(const State& state, const Decision& d, Instant seen, int64_t cost) const {
    State next = state;
    if (d.allowed) next.Admit(policy_, seen, cost);
    if constexpr (requires(State s) { s.Forget(policy_, seen); }) next.Forget(policy_, seen);
    return next;
  }

  Node Place(const Node& from, const Choice& c) const {
    Node n;
    n.state =
        After(from.state, from.state.Peek(policy_, c.seen, Op(c.op).cost), c.seen, Op(c.op).cost);
    n.real_lo = c.real;
    n.first = from.first;
    n.ahead = from.ahead;
    n.ahead.insert(std::upper_bound(n.ahead.begin(), n.ahead.end(), c.op), c.op);
    size_t drop = 0;
    while (drop < n.ahead.size() && n.ahead[drop] == n.first) {
      ++n.first;
      ++drop;
    }
    n.ahead.erase(n.ahead.begin(), n.ahead.begin() + static_cast<ptrdiff_t>(drop));
    // Every call left was sent no sooner than the first of them: an earliest instant before
    // that holds nothing back, and is that instant (so that more states are the same).
    if (n.first < sorted_.size()) n.real_lo = std::max(n.real_lo, Op(n.first).invoke);
    return n;
  }

  // A frame whose every choice failed: the deepest such is the longest linearizable prefix.
  void Failed(const Frame& f) {
    if (best_ && path_.size() <= best_->size()) return;
    best_ = path_;
    stuck_ = f.blocking ? std::optional<size_t>(sorted_[*f.blocking]) : std::nullopt;
  }

  KeyLinearizability Done(LinearVerdict verdict) {
    KeyLinearizability out;
    out.verdict = verdict;
    out.states = states_;
    if (verdict == LinearVerdict::kLinearizable) {
      out.order = path_;
    } else {
      out.order = best_.value_or(std::vector<LinearStep>{});
      if (verdict == LinearVerdict::kNotLinearizable) out.stuck = stuck_;
    }
    return out;
  }

  const Policy& policy_;
  std::span<const LinearOp> ops_;
  const LinearizabilityOptions& options_;
  std::vector<size_t> sorted_;  // the calls' indices in the order they were sent
  std::vector<Frame> stack_;
  std::vector<LinearStep> path_;  // the choice that led to each frame above the first
  std::set<Node> seen_;
  int64_t states_ = 0;
  std::optional<std::vector<LinearStep>> best_;
  std::optional<size_t> stuck_;
};

template <typename State>
KeyLinearizability Search(const Policy& policy, std::span<const LinearOp> ops,
                          const LinearizabilityOptions& options) {
  return LinearSearch<State>(policy, ops, options).Run();
}

}  // namespace

KeyLinearizability CheckLinearizable(const Policy& policy, std::span<const LinearOp> ops,
                                     const LinearizabilityOptions& options) {
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
      return Search<FixedWindowModel>(policy, ops, options);
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      return Search<SlidingLogModel>(policy, ops, options);
    case Algorithm::kSlidingCounter:
    case Algorithm::kSlidingCounterAnchored:
      return Search<SlidingCounterModel>(policy, ops, options);
    case Algorithm::kTokenBucket:
      return Search<TokenBucketModel>(policy, ops, options);
    case Algorithm::kGcra:
      return Search<GcraModel>(policy, ops, options);
    case Algorithm::kAnchoredWindow:
      return Search<AnchoredWindowModel>(policy, ops, options);
    case Algorithm::kTokenBucketIntervals:
      return Search<TokenBucketIntervalsModel>(policy, ops, options);
  }
  return {};
}

HistoryLinearizability CheckHistoryLinearizable(const Policy& policy, const History& history,
                                                const LinearizabilityOptions& options) {
  std::map<std::string_view, std::vector<const HistoryEvent*>> by_key;
  for (const HistoryEvent& e : history) by_key[e.key].push_back(&e);
  HistoryLinearizability out;
  for (auto& [key, events] : by_key) {
    std::stable_sort(
        events.begin(), events.end(),
        [](const HistoryEvent* a, const HistoryEvent* b) { return a->invoke < b->invoke; });
    std::vector<LinearOp> ops;
    ops.reserve(events.size());
    for (const HistoryEvent* e : events) {
      ops.push_back(LinearOp{e->invoke, e->complete, e->cost, e->decision});
    }
    KeyLinearizability r = CheckLinearizable(policy, ops, options);
    ++out.keys;
    out.ops += static_cast<int64_t>(ops.size());
    out.states += r.states;
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
