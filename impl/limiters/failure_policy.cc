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

std::optional<FailurePolicy::Kind> FailurePolicyNamed(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  // The short forms `ratelab serve --on-store-failure` takes too.
  constexpr std::array<std::pair<FailurePolicy::Kind, std::string_view>, 3> kShort = {{
      {FailurePolicy::Kind::kFailOpen, "open"},
      {FailurePolicy::Kind::kFailClosed, "closed"},
      {FailurePolicy::Kind::kCircuitBreaker, "breaker"},
  }};
  for (const auto& [k, n] : kShort) {
    if (n == name) return k;
  }
  return std::nullopt;
}

std::string_view BreakerName(StoreGuard::Breaker breaker) {
  switch (breaker) {
    case StoreGuard::Breaker::kClosed:
      return "closed";
    case StoreGuard::Breaker::kOpen:
      return "open";
    case StoreGuard::Breaker::kHalfOpen:
      return "half-open";
  }
  return "?";
}

StoreGuard::Call StoreGuard::Before(Instant now) {
  if (failure_.kind != FailurePolicy::Kind::kCircuitBreaker || breaker_ == Breaker::kClosed) {
    return {true, false};
  }
  // Open, or half-open with a probe already out: bypass the store.
  if ((breaker_ == Breaker::kOpen && now < open_until_) || probing_) return {false, false};
  breaker_ = Breaker::kHalfOpen;
  probing_ = true;
  return {true, true};
}

void StoreGuard::Answered(const Call& call) {
  if (call.probe) probing_ = false;
  if (failure_.kind == FailurePolicy::Kind::kCircuitBreaker) {
    breaker_ = Breaker::kClosed;
    consecutive_failures_ = 0;
  }
}

void StoreGuard::Excused(const Call& call) {
  if (call.probe) probing_ = false;
}

std::optional<bool> StoreGuard::Failed(const Call& call, Instant now) {
  if (call.probe) probing_ = false;
  switch (failure_.kind) {
    case FailurePolicy::Kind::kError:
      return std::nullopt;
    case FailurePolicy::Kind::kFailOpen:
      return true;
    case FailurePolicy::Kind::kFailClosed:
      return false;
    case FailurePolicy::Kind::kCircuitBreaker:
      ++consecutive_failures_;
      if (breaker_ == Breaker::kHalfOpen || consecutive_failures_ >= failure_.threshold) {
        breaker_ = Breaker::kOpen;
        open_until_ = now + failure_.cool_down;
      }
      return true;
  }
  return std::nullopt;
}

void StoreGuard::Reset() {
  breaker_ = Breaker::kClosed;
  consecutive_failures_ = 0;
  probing_ = false;
}

Decision GuardedProtocol::Degraded(const Request& request, bool admit) const {
  Decision d;
  d.allowed = admit;
  d.limit = policy_.limit;
  d.remaining = 0;  // unknown: the store did not answer
  d.reset = request.now;
  if (!admit) d.retry_after = guard_.policy().retry_after;
  return d;
}

Task<Result<Decision>> GuardedProtocol::Decide(Context& ctx, const Request& request) {
  const StoreGuard::Call call = guard_.Before(request.now);
  if (!call.store) co_return Degraded(request, true);
  Result<Decision> result = co_await inner_->Decide(ctx, request);
  if (result.ok()) {
    guard_.Answered(call);
    co_return result;
  }
  if (absl::IsInvalidArgument(result.status())) {  // the request's fault
    guard_.Excused(call);
    co_return result;
  }
  const std::optional<bool> admit = guard_.Failed(call, request.now);
  if (!admit) co_return result;
  co_return Degraded(request, *admit);
}

void GuardedProtocol::Restart() {
  inner_->Restart();
  guard_.Reset();
}

}  // namespace ratelab
