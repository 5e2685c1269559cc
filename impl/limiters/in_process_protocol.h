// An in-process limiter as a protocol: one Step, the decision itself, on this process's memory.
// Its state does not survive a restart. Its limiter may be shared by protocols on several
// threads (the threads of one `ratelab serve`).
#ifndef RATELAB_IMPL_LIMITERS_IN_PROCESS_PROTOCOL_H_
#define RATELAB_IMPL_LIMITERS_IN_PROCESS_PROTOCOL_H_

#include <memory>

#include "impl/limiters/in_process_limiter.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

class InProcessProtocol final : public Protocol {
 public:
  explicit InProcessProtocol(const Policy& policy) : limiter_(MakeInProcessLimiter(policy)) {}
  // Deciding on `limiter`, which other protocols (on other threads) may share.
  explicit InProcessProtocol(std::shared_ptr<InProcessLimiter> limiter)
      : limiter_(std::move(limiter)) {}

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  Task<Result<Decision>> Peek(Context& ctx, const Request& request) override;
  void Restart() override { limiter_->Clear(); }
  StateSize ProcessState() const override { return {limiter_->KeyCount(), limiter_->StateBytes()}; }
  InProcessLimiter& limiter() { return *limiter_; }

 private:
  std::shared_ptr<InProcessLimiter> limiter_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_IN_PROCESS_PROTOCOL_H_
