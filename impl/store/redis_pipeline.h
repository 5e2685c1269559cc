// Runs the store steps of many requests as pipelines on one Redis connection, so that one thread
// keeps several decisions in flight: each round, the command of every waiting step is sent in one
// write and the replies read back together, and N waiting decisions cost one round trip, not N.
//
// The requests' protocols must use its Kv, and their Contexts its Executor, which keeps each
// step submitted until Run. A step that is one command on this Kv (KvCommandStep, kv_step.h: every
// kv protocol's) has its command queued as it is and its reply handed to it by its place in the
// round, once the replies are in; then its request resumes, and may submit a next step (EVAL
// after NOSCRIPT) for the next round. Any other step is recorded and replayed: applied while the
// Kv queues what it is asked instead of answering, and once the replies are in applied again,
// answered this time. So such a step must ask for the same commands whatever its replies say
// (one GET); one that asks for more than it queued is answered Internal. A connection that fails
// fails every step of its round with the error Execute would have given.
//
// Outside Run (nothing waiting), its Kv sends each command at once. Not thread-safe: one per
// thread, with the thread's RedisKv.
#ifndef RATELAB_IMPL_STORE_REDIS_PIPELINE_H_
#define RATELAB_IMPL_STORE_REDIS_PIPELINE_H_

#include <chrono>
#include <vector>

#include "impl/core/step.h"
#include "impl/store/redis_kv.h"

namespace ratelab {

class KvCommandStep;

class RedisPipeline final : public Kv, public DeferredExecutor {
 public:
  // `redis` must outlive the pipeline.
  explicit RedisPipeline(RedisKv& redis) : redis_(redis) {}

  // Sends the steps waiting, round after round, until none waits.
  void Run() override {
    while (Send()) Receive();
  }
  // Run in halves, so that one thread can keep several connections busy: Send sends the round
  // of the steps waiting (false when none does); Receive reads its replies, answers its steps
  // and resumes their requests (whose next steps wait for the next Send).
  bool Send();
  void Receive();
  // Steps in the round sent and not yet received.
  size_t in_flight() const { return sent_.size(); }
  // For a thread that waits for the round's replies itself and calls Receive once they come
  // (serve): the descriptor they come on, and its connection's number (RedisKv::connection);
  // -1 when none will come (the round failed to send, or asked nothing): Receive answers it at
  // once. Expire fails the round instead, DeadlineExceeded, when they did not come in time.
  int reply_fd() const;
  int64_t connection() const { return redis_.connection(); }
  void Expire();
  // When the oldest step of the round out was submitted: the time its wait runs from. A step
  // that waited while the round before it was out counts that wait, so that a decision waits for
  // the store one timeout in all, not one for the round before and one for its own.
  std::chrono::steady_clock::time_point submitted() const { return sent_since_; }
  // Steps sent so far, and rounds: how many round trips they took; and of the steps, those
  // recorded and replayed (applied twice: not one command on this Kv).
  int64_t steps() const { return steps_; }
  int64_t rounds() const { return rounds_; }
  int64_t replayed() const { return replayed_; }

  Result<KvReply> Execute(std::span<const std::string> argv) override;
  void Submit(PendingStep& step) override {
    if (waiting_.empty()) waiting_since_ = std::chrono::steady_clock::now();
    waiting_.push_back(&step);
  }

 private:
  enum class Mode { kDirect, kQueue, kReplay };

  // `step` as one command on this Kv, or null for a step that is recorded and replayed.
  KvCommandStep* OwnCommand(PendingStep* step);

  RedisKv& redis_;
  std::vector<PendingStep*> waiting_;
  std::vector<PendingStep*> sent_;                       // the round in flight
  std::chrono::steady_clock::time_point waiting_since_;  // the first of `waiting_` was submitted
  std::chrono::steady_clock::time_point sent_since_;     // the first of `sent_` was submitted
  std::vector<size_t> ends_;  // step i of the round asked for commands [ends_[i-1], ends_[i])
  Mode mode_ = Mode::kDirect;
  Status failed_;      // kQueue: the first failure to queue
  size_t queued_ = 0;  // kQueue: commands queued this round
  Result<std::vector<KvReply>> replies_ = std::vector<KvReply>();  // kReplay: the round's
  size_t next_ = 0;  // kReplay: the reply the step's next command gets
  size_t end_ = 0;   // kReplay: past the step's last reply
  int64_t steps_ = 0;
  int64_t rounds_ = 0;
  int64_t replayed_ = 0;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_REDIS_PIPELINE_H_
