// What a limiter does when its store fails (the common Redis recipes: "fail open ... add a circuit
// breaker"; the limit service: "either blocks all traffic (fail-closed) or allows all traffic
// (fail-open)").
//
// GuardedProtocol wraps any protocol with one of:
//   error            the store's error reaches the caller (no decision: the request fails);
//   fail-open        admit every request whose decision failed;
//   fail-closed      deny every request whose decision failed (Retry-After: retry_after);
//   circuit-breaker  fail open, and after `threshold` consecutive failures stop asking the store
//                    at all for `cool_down` (the breaker is open: every request is admitted
//                    without a step); then let one request probe the store (half-open): success
//                    closes the breaker, failure opens it for another cool-down.
// The breaker reads time from each request's `now` (the node's clock) and lives in process
// memory: a restart closes it.
//
// Not thread-safe (one per simulated node, or one per thread in real mode).
#ifndef RATELAB_IMPL_LIMITERS_FAILURE_POLICY_H_
#define RATELAB_IMPL_LIMITERS_FAILURE_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "impl/limiters/protocol.h"

namespace ratelab {

struct FailurePolicy {
  enum class Kind { kError, kFailOpen, kFailClosed, kCircuitBreaker };
  Kind kind = Kind::kError;
  int64_t threshold = 5;                           // circuit-breaker
  Duration cool_down = std::chrono::seconds(10);   // circuit-breaker
  Duration retry_after = std::chrono::seconds(1);  // fail-closed
};

std::string_view FailurePolicyName(FailurePolicy::Kind kind);
// A name FailurePolicyName gives, or a short one: open, closed, breaker.
std::optional<FailurePolicy::Kind> FailurePolicyNamed(std::string_view name);

// A failure policy's state over the calls to one store: what to do before a call (call the store,
// or, the breaker open, admit without it) and after one that failed. Shared by GuardedProtocol
// (one protocol's calls) and the service (every call of a server).
class StoreGuard {
 public:
  enum class Breaker { kClosed, kOpen, kHalfOpen };

  explicit StoreGuard(FailurePolicy failure) : failure_(failure) {}

  // One request's call: whether to make it (not when the breaker is open, or half-open with its
  // probe out: the request is then admitted without the store), and whether it is the probe.
  struct Call {
    bool store = true;
    bool probe = false;
  };
  Call Before(Instant now);
  // After a call Before allowed, the store answered.
  void Answered(const Call& call);
  // After a call Before allowed, the request was refused for its own fault: no news of the store.
  void Excused(const Call& call);
  // After a call Before allowed, the store failed: nothing when the error is the answer (policy
  // error), else whether to admit.
  std::optional<bool> Failed(const Call& call, Instant now);
  // The breaker closed and forgotten (a restart).
  void Reset();

  const FailurePolicy& policy() const { return failure_; }
  Breaker breaker() const { return breaker_; }
  // Whether its answers depend on the calls before (only a circuit breaker's do): without state,
  // every method leaves the guard as it was, and threads may share it without a lock.
  bool HasState() const { return failure_.kind == FailurePolicy::Kind::kCircuitBreaker; }

 private:
  FailurePolicy failure_;
  Breaker breaker_ = Breaker::kClosed;
  int64_t consecutive_failures_ = 0;
  Instant open_until_{};
  bool probing_ = false;
};

std::string_view BreakerName(StoreGuard::Breaker breaker);  // "closed", "open", "half-open"

class GuardedProtocol final : public Protocol {
 public:
  using Breaker = StoreGuard::Breaker;

  GuardedProtocol(std::unique_ptr<Protocol> inner, const Policy& policy, FailurePolicy failure)
      : inner_(std::move(inner)), policy_(policy), guard_(failure) {}

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  void Restart() override;
  StateSize ProcessState() const override { return inner_->ProcessState(); }

  Breaker breaker() const { return guard_.breaker(); }

 private:
  Decision Degraded(const Request& request, bool admit) const;

  std::unique_ptr<Protocol> inner_;
  Policy policy_;
  StoreGuard guard_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_FAILURE_POLICY_H_
