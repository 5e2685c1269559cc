// A step that is one command on a Kv and nothing else, its value the command's reply: how every
// kv protocol talks to its store (impl/limiters/kv_steps.h). It is awaited as any step is
// (Context::Step: an executor applies it, or it runs at once), and besides, a driver that batches
// the commands of many steps on one connection (RedisPipeline) sends its command with the round's
// and hands it its reply by its place in the round, without applying it.
#ifndef RATELAB_IMPL_STORE_KV_STEP_H_
#define RATELAB_IMPL_STORE_KV_STEP_H_

#include <optional>
#include <span>
#include <string>

#include "impl/core/step.h"
#include "impl/store/kv.h"

namespace ratelab {

class KvCommandStep final : public AwaitedStep {
 public:
  // `argv` must outlive the step (it lives in the awaiting coroutine's frame).
  KvCommandStep(Context& ctx, std::string label, Kv& kv, std::span<const std::string> argv)
      : AwaitedStep(ctx.executor(), std::move(label), ctx.request(), Kind::kKvCommand),
        kv_(kv),
        argv_(argv) {}

  Result<KvReply> await_resume() { return std::move(*reply_); }

  void Apply() override { reply_.emplace(kv_.Execute(argv_)); }
  // For a driver that sends the command itself: the store it is for, the command, and then its
  // reply (instead of Apply).
  Kv& kv() const { return kv_; }
  std::span<const std::string> argv() const { return argv_; }
  void Answer(Result<KvReply> reply) { reply_.emplace(std::move(reply)); }

 private:
  Kv& kv_;
  const std::span<const std::string> argv_;
  std::optional<Result<KvReply>> reply_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_KV_STEP_H_
