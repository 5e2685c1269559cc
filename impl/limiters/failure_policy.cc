#include "impl/limiters/failure_policy.h"

#include <array>

namespace ratelab {
namespace {
constexpr std::array<std::pair<FailurePolicy::Kind, std::string_view>, 4> kNames = {{
    {FailurePolicy::Kind::kError, "error"},
    {FailurePolicy::Kind::kFailOpen, "fail-open"},
    {FailurePolicy::Kind::kFailClosed, "fail-closed"},
    {FailurePolicy::Kind::kCircuitBreaker, "circuit-breaker"},
}};
}  // namespace

std::string_view FailurePolicyName(FailurePolicy::Kind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<FailurePolicy::Kind> FailurePolicyFromName(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

Decision GuardedProtocol::Degraded(const Request& request, bool admit) const {
  Decision d;
  d.allowed = admit;
  d.limit = policy_.limit;
  d.remaining = 0;  // unknown: the store did not answer
  d.reset = request.now;
  if (!admit) d.retry_after = failure_.retry_after;
  return d;
}

void GuardedProtocol::RecordFailure(Instant now) {
  ++consecutive_failures_;
  if (breaker_ == Breaker::kHalfOpen || consecutive_failures_ >= failure_.threshold) {
    breaker_ = Breaker::kOpen;
    open_until_ = now + failure_.cool_down;
  }
}

Task<Result<Decision>> GuardedProtocol::Decide(Context& ctx, const Request& request) {
  const bool breaker = failure_.kind == FailurePolicy::Kind::kCircuitBreaker;
  bool probe = false;
  if (breaker && breaker_ != Breaker::kClosed) {
    // Open, or half-open with a probe already out: bypass the store.
    if ((breaker_ == Breaker::kOpen && request.now < open_until_) || probing_) {
      co_return Degraded(request, true);
    }
    breaker_ = Breaker::kHalfOpen;
    probe = probing_ = true;
  }
  Result<Decision> result = co_await inner_->Decide(ctx, request);
  if (probe) probing_ = false;
  if (result.ok()) {
    if (breaker) {
      breaker_ = Breaker::kClosed;
      consecutive_failures_ = 0;
    }
    co_return result;
  }
  if (absl::IsInvalidArgument(result.status())) co_return result;  // the request's fault
  switch (failure_.kind) {
    case FailurePolicy::Kind::kError:
      co_return result;
    case FailurePolicy::Kind::kFailOpen:
      co_return Degraded(request, true);
    case FailurePolicy::Kind::kFailClosed:
      co_return Degraded(request, false);
    case FailurePolicy::Kind::kCircuitBreaker:
      RecordFailure(request.now);
      co_return Degraded(request, true);
  }
  co_return result;
}

void GuardedProtocol::Restart() {
  inner_->Restart();
  breaker_ = Breaker::kClosed;
  consecutive_failures_ = 0;
  probing_ = false;
}

}  // namespace ratelab
