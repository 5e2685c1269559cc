// A 128-bit hash of a linearizability search's state (linearizability.cc, bucket_zones.cc).
#ifndef RATELAB_MODEL_STATE_HASH_H_
#define RATELAB_MODEL_STATE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <utility>

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

}  // namespace ratelab

#endif  // RATELAB_MODEL_STATE_HASH_H_
