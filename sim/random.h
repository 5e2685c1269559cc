// The simulator's only source of randomness: xoshiro256** seeded through splitmix64, with
// distributions written out here (not std:: distributions, whose output differs between standard
// libraries), so one seed gives the same bytes on every machine. Not thread-safe: each run owns
// its Random, and Fork gives independent streams for independent parts of a run.
#ifndef RATELAB_SIM_RANDOM_H_
#define RATELAB_SIM_RANDOM_H_

#include <array>
#include <cstdint>

#include "model/time.h"

namespace ratelab {

class Random {
 public:
  explicit Random(uint64_t seed);

  uint64_t Next();
  // Uniform in [lo, hi); requires lo < hi.
  int64_t Uniform(int64_t lo, int64_t hi);
  // Uniform in [0, 1), 53 bits.
  double UniformDouble();
  // True with probability p.
  bool Chance(double p) { return UniformDouble() < p; }
  // Exponentially distributed with the given mean, in whole nanoseconds (Poisson gaps).
  Duration Exponential(Duration mean);
  // An independent stream for `purpose`, derived from this one's seed (not from its position),
  // so adding draws in one part of a run does not shift another.
  Random Fork(uint64_t purpose) const;

 private:
  uint64_t seed_;
  std::array<uint64_t, 4> s_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_RANDOM_H_
