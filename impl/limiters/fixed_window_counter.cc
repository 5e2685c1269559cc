#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

Decision FixedWindowCounter::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  const int64_t index = FloorDiv(t, window_);
  // A denial changes nothing, so the roll to a new window is kept only when admitting.
  const bool new_window = index > s.window_index;
  const int64_t window_index = new_window ? index : s.window_index;
  const int64_t count = new_window ? 0 : s.count;
  const int64_t window_end = (window_index + 1) * window_;
  Decision d{.limit = limit_, .remaining = limit_ - count, .reset = FromUnixNanos(window_end)};
  if (cost <= limit_ - count) {
    s.window_index = window_index;
    s.count = count + cost;
    d.allowed = true;
    d.remaining = limit_ - s.count;
  } else {
    d.retry_after = cost > limit_ ? kNever : Duration(window_end - t);
  }
  return d;
}

Decision AnchoredWindow::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  // As for the fixed window, a fresh window is kept only when admitting.
  const bool new_window = s.start == kUnseen || t > s.start + window_;
  const int64_t start = new_window ? t : s.start;
  const int64_t count = new_window ? 0 : s.count;
  const int64_t next = start + window_ + 1;  // the first instant after the window
  Decision d{.limit = limit_, .remaining = limit_ - count, .reset = FromUnixNanos(next)};
  if (cost <= limit_ - count) {
    s.start = start;
    s.count = count + cost;
    d.allowed = true;
    d.remaining = limit_ - s.count;
  } else {
    d.retry_after = cost > limit_ ? kNever : Duration(next - t);
  }
  return d;
}

}  // namespace ratelab::internal
