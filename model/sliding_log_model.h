// Sliding log, exact: at most N units admitted in any half-open span of length W. At `now` the
// window is (now - W, now]: an entry admitted at t stops counting at exactly t + W.
// The closed convention (sliding-log-closed; a script that trims with `ZREMRANGEBYSCORE key
// -inf (now-W`) has the window [now - W, now]: an entry still counts at t + W, and stops one
// tick later.
#ifndef RATELAB_MODEL_SLIDING_LOG_MODEL_H_
#define RATELAB_MODEL_SLIDING_LOG_MODEL_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"

namespace ratelab {

// How long an entry counts: W, or W and one tick for the closed window.
Duration SlidingLogReach(const Policy& p);

// How either log below tests time, as a key model says it (key_model.h): each entry against the
// instant, a window apart.
inline constexpr TimeTests kLogTimeTests{
    .only_differences = true, .one_window = true, .each_entry = true};
// A log's entries fed to a search's hash.
void HashLogInto(auto& h, const std::vector<std::pair<Instant, int64_t>>& entries) {
  h.Add(static_cast<uint64_t>(entries.size()));
  for (const auto& [at, cost] : entries) {
    h.Add(at);
    h.Add(cost);
  }
}

struct SlidingLogModel {
  // Every admission: (instant, cost), in admission order (so in time order).
  std::vector<std::pair<Instant, int64_t>> entries;

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  // Drops the entries that count at no instant from `now` on: the same limiter from then.
  void Forget(const Policy& p, Instant now);
  // States compare member by member (the linearizability search keeps those it has seen).
  auto operator<=>(const SlidingLogModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests = kLogTimeTests;
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const { HashLogInto(h, entries); }
};

// The same log as a sorted set keeps it (ZADD at the request's instant, ZCOUNT after it less W):
// each entry at the instant its request brought, and a request counts every entry after its
// instant less W, later ones included. It needs no rule for time going back, so the entries a set
// of admissions leaves are the same in whatever order they came; where time never goes back it
// decides as SlidingLogModel does, and like it keeps at most N units in any span of W. Not a
// reference model: on the client's clock the linearizability search takes an order either log
// gives (linearizability.cc).
struct SlidingLogSortedModel {
  // Every admission that can still change an answer: (instant, cost), in time order.
  std::vector<std::pair<Instant, int64_t>> entries;

  Decision Peek(const Policy& p, Instant now, int64_t cost) const;
  void Admit(const Policy& p, Instant now, int64_t cost);
  void Forget(const Policy& p, Instant now);
  auto operator<=>(const SlidingLogSortedModel&) const = default;
  // As a key model says it (key_model.h).
  static constexpr TimeTests kTimeTests = kLogTimeTests;
  static constexpr Zones kZones = Zones::kNone;
  void HashInto(auto& h) const { HashLogInto(h, entries); }
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_SLIDING_LOG_MODEL_H_
