// What a model of one key is: the one interface the reference models (reference_model.h) and the
// linearizability search (judge/linearizability.h) both take a model by.
//
// A key model is a value. Default-constructed, it is a key never seen. It says
//   - its step: `Peek` answers a request of some cost at an instant, changing nothing, and `Admit`
//     records an admission (whether or not Peek would have allowed it);
//   - its state: two compare equal when they answer alike from then on, and `HashInto` feeds what
//     it holds to a hash, so that a search keeps the states it has seen;
//   - how it tests time (`kTimeTests`), so that a search knows which instants can matter;
//   - where it has one, how its state may be cut into zones (`kZones`): a bucket is one instant;
// and may say `Forget(policy, now)`: become the state every instant from `now` on sees alike (so
// that a search finds more states the same).
#ifndef RATELAB_MODEL_KEY_MODEL_H_
#define RATELAB_MODEL_KEY_MODEL_H_

#include <concepts>
#include <cstdint>

#include "model/decision.h"
#include "model/policy.h"
#include "model/time.h"

namespace ratelab {

// How a model tests the instants it is given.
struct TimeTests {
  // It tests instants only against one another, apart by whole windows (a window opened at a
  // request, a bucket's refill, a log's entries), never against windows counted from the epoch.
  bool only_differences = false;
  // Each such test spans one window (a window opened at a request, a log's entry), not as many as
  // a bucket holds tokens.
  bool one_window = false;
  // A window holds a strict test for each entry (a log's, up to `limit`), not one.
  bool each_entry = false;
};

// Whether a search may keep a model's state as a zone, and how. A bucket's whole state is one
// instant, F, when it is full again (GCRA's TAT; for a token bucket of level L brought up to date
// at U, U + B*T - L): a request of cost c at t is admitted when F - t <= (B - c)T (or (B - 1)T on
// credit), and F becomes max(F, t) + cT. Every test is then a difference of two instants against a
// constant, so the instants a linearization can give its calls are a zone (difference bounds).
enum class Zones {
  kNone,
  // A bucket that decides at the instant it is given, even one before the latest it has seen
  // (GCRA: an earlier instant only finds it stricter).
  kBucketAtGivenInstant,
  // A bucket that decides at the latest instant it has refilled to, when given an earlier one.
  kBucketAtLatestInstant,
};

template <typename M>
concept KeyModel = std::default_initializable<M> && std::copyable<M> &&
    std::equality_comparable<M> &&
    requires(M m, const M& c, const Policy& p, Instant t, int64_t cost) {
  { c.Peek(p, t, cost) } -> std::same_as<Decision>;
  m.Admit(p, t, cost);
  { M::kTimeTests } -> std::convertible_to<TimeTests>;
  { M::kZones } -> std::convertible_to<Zones>;
};

// Whether a model says Forget.
template <typename M>
concept ForgettingModel = KeyModel<M> && requires(M m, const Policy& p, Instant t) {
  m.Forget(p, t);
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_KEY_MODEL_H_
