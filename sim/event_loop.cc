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
  Push({std::max(t, now_), next_seq_++, nullptr, slot});
}

void EventLoop::At(Instant t, EventTarget& target, uint64_t arg) {
  Push({std::max(t, now_), next_seq_++, &target, arg});
}

void EventLoop::Push(const Event& e) {
  // A 4-ary min-heap: half the depth of a binary one, and a node's children share a cache line.
  size_t i = events_.size();
  events_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!Later{}(events_[parent], e)) break;
    events_[i] = events_[parent];
    i = parent;
  }
  events_[i] = e;
}

bool EventLoop::RunOne() {
  if (events_.empty()) return false;
  const Event e = events_.front();
  const Event last = events_.back();
  events_.pop_back();
  if (!events_.empty()) {
    // The hole at the root goes down to a leaf, each level's earliest child moving up into it,
    // then `last` fills it, moved up past what is later than it. `last` was a leaf, so it is
    // late, and goes up seldom: one comparison a level fewer than sifting it down from the root.
    const size_t n = events_.size();
    size_t i = 0;
    while (true) {
      const size_t first = 4 * i + 1;
      if (first >= n) break;
      size_t best = first;
      for (size_t c = first + 1; c < first + 4 && c < n; ++c) {
        if (Later{}(events_[best], events_[c])) best = c;
      }
      events_[i] = events_[best];
      i = best;
    }
    while (i > 0) {
      const size_t parent = (i - 1) / 4;
      if (!Later{}(events_[parent], last)) break;
      events_[i] = events_[parent];
      i = parent;
    }
    events_[i] = last;
  }
  now_ = e.at;
  if (e.target != nullptr) {
    e.target->OnEvent(e.arg);
    return true;
  }
  const auto slot = static_cast<uint32_t>(e.arg);
  // The callback may schedule events (and so grow callbacks_): run it from a local.
  Callback cb = std::move(callbacks_[slot]);
  free_slots_.push_back(slot);
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
