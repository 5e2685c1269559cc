#include "model/oracles.h"

#include <algorithm>
#include <array>

#include "model/oracles_internal.h"

namespace ratelab {

namespace {
constexpr std::array<OracleInfo, 7> kOracles = {
    kAlignedWindowCapOracle,  kAnchoredWindowCapOracle, kAnyWindowCapOracle, kBoundaryBurstOracle,
    kBucketConformanceOracle, kFalseDenialsOracle,      kRetryAfterOracle};
}  // namespace

std::span<const OracleInfo> Oracles() { return kOracles; }

std::vector<Violation> CheckPromise(const History& h, const Policy& policy) {
  switch (policy.algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      return CheckAlignedWindowCap(h, policy.limit, policy.window);
    case Algorithm::kSlidingLog:
      return CheckAnyWindowCap(h, policy.limit, policy.window).violations;
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
      return CheckBucketConformance(h, policy.limit, policy.window);
    case Algorithm::kAnchoredWindow:
      return CheckAnchoredWindowCap(h, policy.limit, policy.window);
  }
  return {};
}

std::string_view PromiseInvariant(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingCounter:
      return "aligned-window-cap";
    case Algorithm::kSlidingLog:
      return "any-window-cap";
    case Algorithm::kTokenBucket:
    case Algorithm::kGcra:
      return "bucket-conformance";
    case Algorithm::kAnchoredWindow:
      return "anchored-window-cap";
  }
  return "";
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
