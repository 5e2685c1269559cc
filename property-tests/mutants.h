// Deliberately broken limiters and models: each property must catch at least one of them, or the
// property proves nothing. Each wraps the correct reference model and breaks one thing.
#ifndef RATELAB_PROPERTY_TESTS_MUTANTS_H_
#define RATELAB_PROPERTY_TESTS_MUTANTS_H_

#include <algorithm>
#include <memory>

#include "property-tests/subjects.h"

namespace ratelab::proptest {

// Decides with a model whose parameters were changed by `distort`, then reports the original
// limit (and, for `retry_shift`, a retry_after moved by that much) as if nothing were wrong.
class DistortedModel final : public Subject {
 public:
  DistortedModel(const Policy& real, const Policy& distorted, Duration retry_shift = Duration(0))
      : real_(real), model_(MakeReferenceModel(distorted)), retry_shift_(retry_shift) {}

  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    Decision d = model_->Decide(key, now, cost);
    d.limit = real_.limit;
    d.remaining = std::min(d.remaining, real_.limit);
    if (!d.allowed && d.retry_after != kNever && d.retry_after > Duration(0)) {
      d.retry_after += retry_shift_;
    }
    return d;
  }

 private:
  Policy real_;
  std::unique_ptr<ReferenceModel> model_;
  Duration retry_shift_;
};

// Admits N + 1 per window: "count <= limit" where "count < limit" was meant.
inline std::unique_ptr<Subject> OffByOneLimit(const Policy& p) {
  Policy wider = p;
  wider.limit = p.limit + 1;
  return std::make_unique<DistortedModel>(p, wider);
}

// Lets an entry leave the window one tick early (window W - 1; W stays 1 when W is 1 tick).
inline std::unique_ptr<Subject> EarlyExpiry(const Policy& p) {
  Policy shorter = p;
  shorter.window = std::max(Duration(1), p.window - Duration(1));
  return std::make_unique<DistortedModel>(p, shorter);
}

// Refills twice as fast as promised (interval T / 2, rounded up).
inline std::unique_ptr<Subject> FastRefill(const Policy& p) {
  Policy faster = p;
  faster.window = Duration((p.window.count() + 1) / 2);
  return std::make_unique<DistortedModel>(p, faster);
}

// Tells the client to retry one tick too soon.
inline std::unique_ptr<Subject> RetryTooSoon(const Policy& p) {
  return std::make_unique<DistortedModel>(p, p, Duration(-1));
}

}  // namespace ratelab::proptest

#endif  // RATELAB_PROPERTY_TESTS_MUTANTS_H_
