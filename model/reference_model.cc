#include "model/reference_model.h"

#include "model/anchored_window_model.h"
#include "model/fixed_window_model.h"
#include "model/gcra_model.h"
#include "model/sliding_counter_model.h"
#include "model/sliding_log_model.h"
#include "model/token_bucket_intervals_model.h"
#include "model/token_bucket_model.h"

namespace ratelab {

Decision ReferenceModel::Decide(std::string_view key, Instant now, int64_t cost) {
  Decision d = Peek(key, now, cost);
  if (d.allowed) Admit(key, now, cost);
  return d;
}

std::unique_ptr<ReferenceModel> MakeReferenceModel(const Policy& policy) {
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
      return std::make_unique<internal::PerKeyModel<FixedWindowModel>>(policy);
    case Algorithm::kSlidingLog:
      return std::make_unique<internal::PerKeyModel<SlidingLogModel>>(policy);
    case Algorithm::kSlidingCounter:
      return std::make_unique<internal::PerKeyModel<SlidingCounterModel>>(policy);
    case Algorithm::kTokenBucket:
    case Algorithm::kTokenBucketCredit:
      return std::make_unique<internal::PerKeyModel<TokenBucketModel>>(policy);
    case Algorithm::kGcra:
      return std::make_unique<internal::PerKeyModel<GcraModel>>(policy);
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen:
      return std::make_unique<internal::PerKeyModel<AnchoredWindowModel>>(policy);
    case Algorithm::kSlidingLogClosed:
      return std::make_unique<internal::PerKeyModel<SlidingLogModel>>(policy);
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return std::make_unique<internal::PerKeyModel<SlidingCounterModel>>(policy);
    case Algorithm::kTokenBucketIntervals:
      return std::make_unique<internal::PerKeyModel<TokenBucketIntervalsModel>>(policy);
  }
  return nullptr;
}

}  // namespace ratelab
