#include "impl/store/redis_pipeline.h"

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
      return (*replies_)[next_++];
  }
  return absl::InternalError("unreachable");
}

bool RedisPipeline::Send() {
  if (waiting_.empty()) return false;
  sent_.clear();
  sent_.swap(waiting_);
  // What each step asks, queued.
  mode_ = Mode::kQueue;
  failed_ = absl::OkStatus();
  queued_ = 0;
  ends_.clear();
  for (PendingStep* step : sent_) {
    step->Apply();
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
    sent_[i]->Apply();
  }
  mode_ = Mode::kDirect;
  steps_ += static_cast<int64_t>(sent_.size());
  ++rounds_;
  std::vector<PendingStep*> answered;
  answered.swap(sent_);
  for (PendingStep* step : answered) step->resume.resume();
}

}  // namespace ratelab
