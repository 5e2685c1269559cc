// What the linearizability searches (linearizability.cc, bucket_zones.cc) share: the calls of a key
// in the order they were sent, which of them are placed, and 128-bit hashes of states.
#ifndef RATELAB_JUDGE_SEARCH_STATE_H_
#define RATELAB_JUDGE_SEARCH_STATE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "judge/linearizability.h"
#include "model/time.h"

namespace ratelab {

// A 128-bit hash of a search state: the search keeps the states it has seen as hashes, two
// independent 64-bit lanes (a collision, which could hide a linearization, is as likely as two
// random 128-bit numbers being equal).
class StateHash {
 public:
  void Add(uint64_t v) {
    a_ = Mix(a_ ^ v);
    b_ = Mix(b_ + v * 0x100000001B3ULL + 0x9E3779B97F4A7C15ULL);
  }
  void Add(int64_t v) { Add(static_cast<uint64_t>(v)); }
  void Add(Instant t) { Add(t.time_since_epoch().count()); }
  void Add(Int128 v) {
    Add(static_cast<uint64_t>(v));
    Add(static_cast<uint64_t>(v >> 64));
  }
  std::pair<uint64_t, uint64_t> value() const { return {a_, b_}; }

 private:
  // MurmurHash3's finaliser.
  static uint64_t Mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
  }
  uint64_t a_ = 0x243F6A8885A308D3ULL;
  uint64_t b_ = 0x13198A2E03707344ULL;
};

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& p) const { return p.first ^ p.second; }
};

// Which calls a search has placed, by their positions in the order they were sent: every one
// below `first`, and those placed `ahead` of it (ascending).
struct PlacedCalls {
  size_t first = 0;
  std::vector<size_t> ahead;

  bool Has(size_t position) const {
    return position < first || std::binary_search(ahead.begin(), ahead.end(), position);
  }
  // These and `position`.
  PlacedCalls With(size_t position) const {
    PlacedCalls out{first, ahead};
    out.ahead.insert(std::upper_bound(out.ahead.begin(), out.ahead.end(), position), position);
    size_t drop = 0;
    while (drop < out.ahead.size() && out.ahead[drop] == out.first) {
      ++out.first;
      ++drop;
    }
    out.ahead.erase(out.ahead.begin(), out.ahead.begin() + static_cast<std::ptrdiff_t>(drop));
    return out;
  }
  void HashInto(StateHash& h) const {
    h.Add(static_cast<uint64_t>(first));
    for (const size_t a : ahead) h.Add(static_cast<uint64_t>(a));
  }
};

// The calls of one key by their positions in the order they were sent.
class SentCalls {
 public:
  explicit SentCalls(std::span<const LinearOp> ops) : ops_(ops), sorted_(ops.size()) {
    std::iota(sorted_.begin(), sorted_.end(), size_t{0});
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](size_t a, size_t b) { return ops[a].invoke < ops[b].invoke; });
    for (const LinearOp& op : ops) last_ = std::max(last_, op.answer ? op.complete : op.invoke);
  }

  size_t size() const { return sorted_.size(); }
  const LinearOp& operator[](size_t position) const { return ops_[sorted_[position]]; }
  // The call's index among those given.
  size_t Index(size_t position) const { return sorted_[position]; }
  // The history's last instant: on the client's clock, a call without an answer read its clock at
  // some instant up to it.
  Instant last() const { return last_; }

  // The calls that can go next once `placed` are: those sent before every call left was answered.
  struct Region {
    std::vector<size_t> calls;
    std::optional<Instant> hi;       // the first answer among the calls left; none when every
                                     // answered call is placed
    std::optional<size_t> blocking;  // the call of that answer
  };
  Region RegionAfter(const PlacedCalls& placed) const {
    Region r;
    for (size_t i = placed.first; i < size() && (!r.hi || (*this)[i].invoke <= *r.hi); ++i) {
      if (placed.Has(i)) continue;
      const LinearOp& op = (*this)[i];
      if (op.answer && (!r.hi || op.complete < *r.hi)) {
        r.hi = op.complete;
        r.blocking = i;
      }
      r.calls.push_back(i);
    }
    return r;
  }

 private:
  std::span<const LinearOp> ops_;
  std::vector<size_t> sorted_;
  Instant last_ = Instant::min();
};

}  // namespace ratelab

#endif  // RATELAB_JUDGE_SEARCH_STATE_H_
