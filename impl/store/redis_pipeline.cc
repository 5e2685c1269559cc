#include "impl/store/redis_pipeline.h"

#include "impl/store/kv_step.h"

namespace ratelab {

Result<KvReply> RedisPipeline::Execute(std::span<const std::string> argv) {
  switch (mode_) {
    case Mode::kDirect:
      return redis_.Execute(argv);
    case Mode::kQueue:
      if (failed_.ok()) failed_ = redis_.Queue(argv);
      ++queued_;
      return KvReply::Nil();
    case Mode::kReplay:
      if (!replies_.ok()) return replies_.status();
      if (next_ >= end_) {
        return absl::InternalError(
            "a step asked Redis for more than it did before its replies came (its commands "
            "depend on its replies), so it cannot be pipelined");
      }
      return std::move((*replies_)[next_++]);  // each reply is its step's alone
  }
  return absl::InternalError("unreachable");
}

KvCommandStep* RedisPipeline::OwnCommand(PendingStep* step) {
  if (step->kind() != PendingStep::Kind::kKvCommand) return nullptr;
  auto* command = static_cast<KvCommandStep*>(step);
  return &command->kv() == this ? command : nullptr;
}

bool RedisPipeline::Send() {
  if (waiting_.empty()) return false;
  sent_.clear();
  sent_.swap(waiting_);
  sent_since_ = waiting_since_;
  // What each step asks, queued.
  mode_ = Mode::kQueue;
  failed_ = absl::OkStatus();
  queued_ = 0;
  ends_.clear();
  for (PendingStep* step : sent_) {
    if (KvCommandStep* command = OwnCommand(step)) {
      if (failed_.ok()) failed_ = redis_.Queue(command->argv());
      ++queued_;
    } else {
      step->Apply();
      ++replayed_;
    }
    ends_.push_back(queued_);
  }
  mode_ = Mode::kDirect;
  if (failed_.ok()) failed_ = redis_.Flush();
  return true;
}

int RedisPipeline::reply_fd() const {
  return sent_.empty() || !failed_.ok() || queued_ == 0 ? -1 : redis_.fd();
}

void RedisPipeline::Expire() {
  if (failed_.ok()) failed_ = redis_.Abandon();
  Receive();
}

void RedisPipeline::Receive() {
  if (!failed_.ok()) {
    replies_ = failed_;
  } else {
    replies_ = redis_.Receive(queued_);
  }
  // Each step again, answered.
  mode_ = Mode::kReplay;
  for (size_t i = 0; i < sent_.size(); ++i) {
    next_ = i == 0 ? 0 : ends_[i - 1];
    end_ = ends_[i];
    if (KvCommandStep* command = OwnCommand(sent_[i])) {
      command->Answer(replies_.ok() ? Result<KvReply>(std::move((*replies_)[next_]))
                                    : Result<KvReply>(replies_.status()));
    } else {
      sent_[i]->Apply();
    }
  }
  mode_ = Mode::kDirect;
  steps_ += static_cast<int64_t>(sent_.size());
  ++rounds_;
  std::vector<PendingStep*> answered;
  answered.swap(sent_);
  for (PendingStep* step : answered) step->resume.resume();
}

}  // namespace ratelab
