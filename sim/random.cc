#include "sim/random.h"

#include <cmath>

namespace ratelab {

namespace {
__extension__ using Uint128 = unsigned __int128;
uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Random::Random(uint64_t seed) : seed_(seed) {
  uint64_t x = seed;
  for (uint64_t& word : s_) word = SplitMix64(x);
}

uint64_t Random::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

int64_t Random::Uniform(int64_t lo, int64_t hi) {
  const uint64_t range = static_cast<uint64_t>(hi - lo);
  // Lemire's multiply-shift with rejection: unbiased.
  Uint128 m = static_cast<Uint128>(Next()) * range;
  auto low = static_cast<uint64_t>(m);
  if (low < range) {
    const uint64_t threshold = -range % range;
    while (low < threshold) {
      m = static_cast<Uint128>(Next()) * range;
      low = static_cast<uint64_t>(m);
    }
  }
  return lo + static_cast<int64_t>(m >> 64);
}

double Random::UniformDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

Duration Random::Exponential(Duration mean) {
  const double u = 1.0 - UniformDouble();  // (0, 1]
  return Duration(
      static_cast<int64_t>(std::llround(-std::log(u) * static_cast<double>(mean.count()))));
}

Random Random::Fork(uint64_t purpose) const {
  uint64_t x = seed_ ^ (purpose * 0xd1342543de82ef95ULL);
  return Random(SplitMix64(x));
}

}  // namespace ratelab
