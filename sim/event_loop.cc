#include "sim/event_loop.h"

#include <algorithm>

namespace ratelab {

void EventLoop::At(Instant t, Callback cb) {
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(cb));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    callbacks_[slot] = std::move(cb);
  }
  events_.push_back({std::max(t, now_), next_seq_++, slot});
  std::push_heap(events_.begin(), events_.end(), Later{});
}

bool EventLoop::RunOne() {
  if (events_.empty()) return false;
  std::pop_heap(events_.begin(), events_.end(), Later{});
  const Event e = events_.back();
  events_.pop_back();
  now_ = e.at;
  // The callback may schedule events (and so grow callbacks_): run it from a local.
  Callback cb = std::move(callbacks_[e.slot]);
  free_slots_.push_back(e.slot);
  cb();
  return true;
}

void EventLoop::RunUntil(Instant end) {
  while (!events_.empty()) {
    if (events_.front().at > end) break;  // the heap's front is the earliest event
    RunOne();
  }
  now_ = std::max(now_, end);
}

}  // namespace ratelab
