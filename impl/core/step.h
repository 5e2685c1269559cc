// Step: the one suspension point of a protocol. Every store operation (one Redis command or
// script, one SQL statement, one document operation) is written
//
//   Result<Reply> reply = co_await ctx.Step("INCR " + key, [&] { return kv.Incr(key); });
//
// and who runs it, and when, is the executor's business:
//   - real mode (InlineExecutor): the operation runs now, on the caller's thread, without
//     suspending;
//   - simulation: the simulator queues the step, applies it atomically at a virtual time of its
//     choosing, and resumes the request later, so steps of concurrent requests interleave as
//     they could in production, the same way for the same seed.
// A step that a crash cuts off is never applied: its coroutine is destroyed while suspended.
#ifndef RATELAB_IMPL_CORE_STEP_H_
#define RATELAB_IMPL_CORE_STEP_H_

#include <coroutine>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "impl/core/frame_pool.h"

namespace ratelab {

// A store operation waiting for the executor. It lives in the suspended coroutine's frame: valid
// until `resume` is resumed or the coroutine is destroyed.
class PendingStep {
 public:
  // What kind of step it is, for an executor that runs a kind itself: a step that is one command
  // on a Kv and nothing else (KvCommandStep, impl/store/kv_step.h) can be sent by a driver that
  // batches commands and handed its reply, never applied.
  enum class Kind : uint8_t { kAny, kKvCommand };

  // Performs the operation. Called at most once, before `resume`.
  virtual void Apply() = 0;
  Kind kind() const { return kind_; }
  // What the step does, e.g. "INCR rl:user:u1", for histories and witnesses.
  const std::string& label() const { return label_; }
  // The request this step belongs to, as its Context names it (-1 when none does).
  int64_t request() const { return request_; }
  // Continues the request once the answer is back.
  std::coroutine_handle<> resume;

 protected:
  // (The label is taken by reference down to here, where it is moved once: a simulation makes a
  // step for every request, and a move of the label at each constructor showed in its profile.)
  PendingStep(std::string&& label, int64_t request, Kind kind = Kind::kAny)
      : label_(std::move(label)), request_(request), kind_(kind) {}
  ~PendingStep() = default;

 private:
  std::string label_;
  int64_t request_;
  Kind kind_;
};

class Executor {
 public:
  virtual ~Executor() = default;
  // True when steps run at once on the caller's thread (Submit is then never called).
  virtual bool RunsInline() const = 0;
  // Takes a suspended step; must eventually Apply it and resume it, or drop it (a crash).
  virtual void Submit(PendingStep& step) = 0;
  // Whether it reads its steps' labels (a simulation's history, a stress run's witness). One
  // that does not may be handed steps with none, and a protocol whose label costs more than a
  // literal makes it only for one that does (Context::labelled).
  virtual bool ReadsLabels() const { return true; }
};

// Real mode: every step runs immediately. Stateless and thread-safe.
class InlineExecutor final : public Executor {
 public:
  bool RunsInline() const override { return true; }
  void Submit(PendingStep& step) override {
    step.Apply();
    step.resume.resume();
  }
  bool ReadsLabels() const override { return false; }
};

// An executor that keeps the steps submitted to it until Run, and runs them together (several in
// one round trip, or each on a connection of its own), resuming each request when its answer is
// in: how one thread keeps many decisions in flight (RedisPipeline, PostgresPool).
class DeferredExecutor : public Executor {
 public:
  bool RunsInline() const final { return false; }
  // Runs the steps submitted, and the steps their requests submit next, until none is left.
  virtual void Run() = 0;
  bool ReadsLabels() const override { return false; }
};

// A step as its coroutine awaits it: applied at once where the executor runs steps inline, else
// submitted, and resumed once applied.
class AwaitedStep : public PendingStep {
 public:
  bool await_ready() {
    if (!executor_.RunsInline()) return false;
    Apply();
    return true;
  }
  void await_suspend(std::coroutine_handle<> h) {
    resume = h;
    executor_.Submit(*this);
  }

 protected:
  AwaitedStep(Executor& executor, std::string&& label, int64_t request, Kind kind = Kind::kAny)
      : PendingStep(std::move(label), request, kind), executor_(executor) {}
  ~AwaitedStep() = default;

 private:
  Executor& executor_;
};

template <typename Op>
class StepAwaiter final : public AwaitedStep {
 public:
  using Value = std::invoke_result_t<Op&>;

  StepAwaiter(Executor& executor, std::string&& label, int64_t request, Op op)
      : AwaitedStep(executor, std::move(label), request), op_(std::move(op)) {}

  Value await_resume() { return std::move(*value_); }
  void Apply() override { value_.emplace(op_()); }

 private:
  Op op_;
  std::optional<Value> value_;
};

// What a protocol is handed for one request: the executor that runs its steps, and the
// request's id in the run (so a simulator can attribute each step to its request).
class Context {
 public:
  // `frames`: where the frames of the coroutines it is passed to come from (a simulated run's
  // pool); none: the heap.
  explicit Context(Executor& executor, int64_t request = -1, FramePool* frames = nullptr)
      : executor_(executor), request_(request), frames_(frames) {}

  template <typename Op>
  StepAwaiter<Op> Step(std::string label, Op op) {
    return StepAwaiter<Op>(executor_, std::move(label), request_, std::move(op));
  }
  Executor& executor() const { return executor_; }
  // Whether its steps' labels are read (Executor::ReadsLabels): a step's label may be left empty
  // when not.
  bool labelled() const { return executor_.ReadsLabels(); }
  // The request's id in the run; -1 when whoever runs it numbers none.
  int64_t request() const { return request_; }
  FramePool* frames() const { return frames_; }

 private:
  Executor& executor_;
  int64_t request_;
  FramePool* frames_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_STEP_H_
