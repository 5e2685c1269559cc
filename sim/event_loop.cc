#include "sim/event_loop.h"

#include <algorithm>

namespace ratelab {

void EventLoop::At(Instant t, Callback cb) {
  events_.push_back({std::max(t, now_), next_seq_++, std::move(cb)});
  std::push_heap(events_.begin(), events_.end(), Later);
}

bool EventLoop::RunOne() {
  if (events_.empty()) return false;
  std::pop_heap(events_.begin(), events_.end(), Later);
  Event e = std::move(events_.back());
  events_.pop_back();
  now_ = e.at;
  e.cb();
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
