#include "judge/oracles.h"

#include <algorithm>
#include <array>

#include "judge/oracles_internal.h"

namespace ratelab {

std::vector<Violation> CheckPromise(const History& h, const Policy& policy, Duration resolution) {
  const WindowEdge closed = resolution > Duration(1) ? WindowEdge::kHalfOpen : WindowEdge::kClosed;
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      return CheckAlignedWindowCap(h, policy.limit, policy.window, policy.offset);
    case Algorithm::kSlidingLog:
      return CheckAnyWindowCap(h, policy.limit, policy.window).violations;
    case Algorithm::kSlidingLogClosed:
      return CheckAnyWindowCap(h, policy.limit, policy.window, closed).violations;
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
    case Algorithm::kTokenBucketIntervals:
    case Algorithm::kTokenBucketCredit:
      return CheckBucketConformance(h, policy.limit, policy.window, CreditOf(policy));
    case Algorithm::kAnchoredWindow:
      return CheckAnchoredWindowCap(h, policy.limit, policy.window, closed);
    case Algorithm::kAnchoredWindowHalfOpen:
      return CheckAnchoredWindowCap(h, policy.limit, policy.window, WindowEdge::kHalfOpen);
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return CheckAnchoredGridCap(h, policy.limit, policy.window);
  }
  return {};
}

CheckId PromiseInvariant(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      return CheckId::kAlignedWindowCap;
    case Algorithm::kSlidingLog:
    case Algorithm::kSlidingLogClosed:
      return CheckId::kAnyWindowCap;
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
    case Algorithm::kTokenBucketIntervals:
    case Algorithm::kTokenBucketCredit:
      return CheckId::kBucketConformance;
    case Algorithm::kAnchoredWindow:
    case Algorithm::kAnchoredWindowHalfOpen:
      return CheckId::kAnchoredWindowCap;
    case Algorithm::kSlidingCounterAnchored:
    case Algorithm::kSlidingCounterAnchoredFloored:
      return CheckId::kAnchoredGridCap;
  }
  return CheckId::kAnyWindowCap;
}

std::vector<const HistoryEvent*> ByKeyInInvokeOrder(const History& h) {
  std::vector<const HistoryEvent*> out;
  out.reserve(h.size());
  for (const auto& [key, events] :
       internal::GroupByKey(h, [](const HistoryEvent&) { return true; })) {
    out.insert(out.end(), events.begin(), events.end());
  }
  return out;
}

namespace internal {

bool InvokeOrder(const HistoryEvent* a, const HistoryEvent* b) {
  return a->invoke != b->invoke ? a->invoke < b->invoke : a->id < b->id;
}

std::vector<HistoryEvent> Copy(std::span<const HistoryEvent* const> events, size_t from,
                               size_t to) {
  std::vector<HistoryEvent> out;
  out.reserve(to - from);
  for (size_t i = from; i < to; ++i) out.push_back(*events[i]);
  return out;
}

}  // namespace internal
}  // namespace ratelab
