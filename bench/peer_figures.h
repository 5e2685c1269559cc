// What a throughput benchmark reads of one side of a setting, ratelab's or its peer's (pgbench,
// redis-benchmark), in one round; the rounds of the two sides, taken in turns; and the round a
// setting is shown by.
#ifndef RATELAB_BENCH_PEER_FIGURES_H_
#define RATELAB_BENCH_PEER_FIGURES_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ratelab {

struct Figures {
  double per_second = 0;
  double p50_ms = 0;
  double p99_ms = 0;
};

// The `q` quantile of `v` (reordered), 0 when it is empty.
inline double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

// The round with the median rate. Requires !rounds.empty().
inline Figures Median(std::vector<Figures> rounds) {
  std::sort(rounds.begin(), rounds.end(),
            [](const Figures& a, const Figures& b) { return a.per_second < b.per_second; });
  return rounds[rounds.size() / 2];
}

// Runs `ours` and `theirs` `rounds` times each, the two taking turns to go first (ours in the
// first round), so that a drift of the machine's during the run falls on both alike.
template <typename Ours, typename Theirs>
void TakeTurns(int rounds, Ours ours, Theirs theirs) {
  for (int round = 0; round < rounds; ++round) {
    if (round % 2 == 0) {
      ours();
      theirs();
    } else {
      theirs();
      ours();
    }
  }
}

}  // namespace ratelab

#endif  // RATELAB_BENCH_PEER_FIGURES_H_
