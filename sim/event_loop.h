// The simulator's heart: a virtual clock and the events waiting on it.
//
// Events run in (virtual time, sequence number) order; the sequence number is per loop and
// increases with each scheduling, so ties break by the order events were scheduled and a run is
// a pure function of what was scheduled. Single-threaded, no statics: independent loops can run
// side by side on different threads (seed sweeps).
//
// Invariant: now() never decreases; an event is never scheduled before now().
#ifndef RATELAB_SIM_EVENT_LOOP_H_
#define RATELAB_SIM_EVENT_LOOP_H_

#include <cstdint>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "impl/core/clock.h"
#include "model/time.h"

namespace ratelab {

// What an event can call without a callback object: the simulator's hottest events (a step's
// two legs) are a pointer and a number, with nothing to allocate, move or destroy.
class EventTarget {
 public:
  virtual void OnEvent(uint64_t arg) = 0;

 protected:
  ~EventTarget() = default;
};

// The loop is also the true (virtual) clock of a run, for what runs on true time: the stores.
class EventLoop final : public Clock {
 public:
  using Callback = absl::AnyInvocable<void()>;

  explicit EventLoop(Instant start) : now_(start) {}

  Instant now() const { return now_; }
  Instant Now() const override { return now_; }
  // Runs `cb` at `t`; a `t` in the past runs at now() instead.
  void At(Instant t, Callback cb);
  void After(Duration d, Callback cb) { At(now_ + d, std::move(cb)); }
  // Calls `target.OnEvent(arg)` at `t` (in the same order as a callback scheduled then).
  void At(Instant t, EventTarget& target, uint64_t arg);
  void After(Duration d, EventTarget& target, uint64_t arg) { At(now_ + d, target, arg); }

  // Runs the earliest event; false when none is left.
  bool RunOne();
  // A stream of events that are already in time order (a run's arrivals) bypasses the queue:
  // TakeTicket gives the next one its place in the (time, sequence) order, as At would have;
  // ComesFirst says whether an event at `t` with that ticket is due before everything queued;
  // RunStreamed moves the clock to `t` (or keeps it, if `t` is past) for the caller to run it.
  // Exactly the order of scheduling it with At, without the queue's cost.
  uint64_t TakeTicket() { return next_seq_++; }
  bool ComesFirst(Instant t, uint64_t ticket) const {
    return events_.empty() ||
           Later{}(events_.front(), Event{std::max(t, now_), ticket, nullptr, 0});
  }
  void RunStreamed(Instant t) { now_ = std::max(t, now_); }

  // Runs every event up to and including `end`, then moves the clock to `end`.
  void RunUntil(Instant end);
  // Runs until no event is left.
  void RunAll() {
    while (RunOne()) {
    }
  }

 private:
  // The heap holds small trivially copyable entries; callbacks wait in slots of their own, so
  // reordering the heap never moves a callback.
  struct Event {
    Instant at;
    uint64_t seq;
    EventTarget* target;  // null: run callbacks_[arg]
    uint64_t arg;
  };
  void Push(const Event& e);
  // Min-heap order for std::push_heap / std::pop_heap (which build max-heaps); a type, not a
  // function pointer, so that the heap operations inline it.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };

  Instant now_;
  uint64_t next_seq_ = 0;
  std::vector<Event> events_;
  std::vector<Callback> callbacks_;  // by slot
  std::vector<uint32_t> free_slots_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_EVENT_LOOP_H_
