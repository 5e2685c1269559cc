// Every key model (key_model.h) by the algorithm it is the model of: the one place an algorithm
// becomes a model type.
#ifndef RATELAB_MODEL_KEY_MODELS_H_
#define RATELAB_MODEL_KEY_MODELS_H_

#include "model/anchored_window_model.h"
#include "model/fixed_window_model.h"
#include "model/gcra_model.h"
#include "model/key_model.h"
#include "model/policy.h"
#include "model/sliding_counter_model.h"
#include "model/sliding_log_model.h"
#include "model/token_bucket_intervals_model.h"
#include "model/token_bucket_model.h"

namespace ratelab {

// What `f.template operator()<M>()` returns for M, the model of `algorithm`.
template <typename F>
decltype(auto) WithKeyModel(Algorithm algorithm, F&& f) {
  switch (algorithm) {
    case Algorithm::kFixedWindow:
      return f.template operator()<FixedWindowModel>();
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      return f.template operator()<SlidingLogModel>();
    case Algorithm::kSlidingCounter:
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return f.template operator()<SlidingCounterModel>();
    case Algorithm::kTokenBucket:
    case Algorithm::kTokenBucketCredit:
      return f.template operator()<TokenBucketModel>();
    case Algorithm::kGcra:
      return f.template operator()<GcraModel>();
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen:
      return f.template operator()<AnchoredWindowModel>();
    case Algorithm::kTokenBucketIntervals:
      return f.template operator()<TokenBucketIntervalsModel>();
  }
  return f.template operator()<FixedWindowModel>();  // not reached: the switch names each one
}

static_assert(KeyModel<FixedWindowModel> && KeyModel<SlidingLogModel> &&
              KeyModel<SlidingLogSortedModel> && KeyModel<SlidingCounterModel> &&
              KeyModel<TokenBucketModel> && KeyModel<GcraModel> && KeyModel<AnchoredWindowModel> &&
              KeyModel<TokenBucketIntervalsModel>);

}  // namespace ratelab

#endif  // RATELAB_MODEL_KEY_MODELS_H_
