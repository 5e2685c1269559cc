// What each limiter did to the run's traffic, as numbers: measured against the claim ("limit in
// any window") and the exact sliding log that keeps it, over time, per user, and during each
// fault. Computed from the histories alone, so they hold for any protocol.
#ifndef RATELAB_REPORTS_METRICS_H_
#define RATELAB_REPORTS_METRICS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario_run.h"

namespace ratelab {

// What a limiter decided for the requests sent during one fault (from its start to its end; for
// a clock jump, in the claim's window after it).
struct FaultOutcome {
  std::string fault;
  Instant from{};
  Instant to{};
  int64_t offered = 0;
  int64_t admitted = 0;
  int64_t denied = 0;
  int64_t unanswered = 0;
};

struct LimiterMetrics {
  // Admitted requests that break "limit in any window": with them, the window ending at them
  // holds more than the limit for their key.
  int64_t over_admitted = 0;
  // Denied requests that an exact sliding log would have admitted: the window ending at them held
  // room for them, given what this limiter had admitted.
  int64_t false_denials = 0;
  // What the exact limiter of the claim (a sliding log: `limit` in any window, each request
  // decided when it was sent) admits of the same requests: the yardstick for admissions lost.
  int64_t exact_admitted = 0;
  // The most one key had admitted in any window, over the limit (above 1: a burst past the claim).
  double burst_ratio = 0;
  // Jain's index of admitted share (admitted / offered) over the users under contention (those
  // that offered more than the limit in some window): 1 when all got the same share, 1/n when
  // one user got everything. Empty when no user was under contention.
  std::optional<double> fairness;
  int64_t contended_users = 0;
  // The state left at the end of the run, per key that has state. Empty when no key has.
  std::optional<double> state_bytes_per_key;
  // Store operations per answered request.
  double steps_per_decision = 0;
  // Decision latency (answer minus send) of answered requests: virtual time in the simulator.
  // latency_cdf[i] is the i-th percentile, i = 0..100.
  std::vector<Duration> latency_cdf;
  std::vector<FaultOutcome> during_faults;
};

LimiterMetrics ComputeMetrics(const RunResult& c, const LimiterOutcome& o);

// Time bins covering a run's requests, from the first's (edges at whole widths since the
// scenario's start): at most 120 of them, and no more than one for every 2 requests (at least 10).
struct Bins {
  Instant start{};
  Duration width{};
  size_t count = 0;
  size_t Of(Instant t) const;
};
Bins ChooseBins(const RunResult& c);

// Per bin, by send time.
struct TimeSeries {
  std::vector<int64_t> offered, admitted, denied, unanswered;
  // The most one key held admitted in a claim window ending anywhere in the bin (at its start,
  // or at one of its admissions): a step function of time; the fixed window's 2N shows here.
  std::vector<int64_t> peak_in_window;
};
TimeSeries ComputeSeries(const RunResult& c, const LimiterOutcome& o, const Bins& bins);

// The users that offered most (at most `n`, busiest first, ties by key), with what each limiter
// admitted of theirs, limiter by limiter.
struct UserShare {
  std::string key;
  int64_t offered = 0;
  std::vector<int64_t> admitted;
};
std::vector<UserShare> TopUsers(const RunResult& c, size_t n);

}  // namespace ratelab

#endif  // RATELAB_REPORTS_METRICS_H_
