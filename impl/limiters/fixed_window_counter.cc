#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

namespace {

// Admits `cost` at `t` into a window holding `count` of `limit` units that ends just before
// `next`, when it fits; `keep(new_count)` then stores the window. A denial changes nothing, so a
// roll to a new window is kept only when admitting.
template <typename Keep>
Decision Take(int64_t limit, int64_t count, int64_t next, int64_t t, int64_t cost, Keep keep) {
  Decision d{.limit = limit, .remaining = limit - count, .reset = FromUnixNanos(next)};
  if (cost <= limit - count) {
    keep(count + cost);
    d.allowed = true;
    d.remaining = limit - count - cost;
  } else {
    d.retry_after = cost > limit ? kNever : Duration(next - t);
  }
  return d;
}

}  // namespace

Decision FixedWindowCounter::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  const int64_t index = FloorDiv(t, window_);
  const bool new_window = index > s.window_index;
  const int64_t window_index = new_window ? index : s.window_index;
  return Take(limit_, new_window ? 0 : s.count, (window_index + 1) * window_, t, cost,
              [&](int64_t count) {
                s = {window_index, count};
              });
}

Decision AnchoredWindow::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  const bool new_window = s.start == kUnseen || t > s.start + window_;
  const int64_t start = new_window ? t : s.start;
  // The window lasts through start + W: the first instant after it is start + W + 1.
  return Take(limit_, new_window ? 0 : s.count, start + window_ + 1, t, cost, [&](int64_t count) {
    s = {start, count};
  });
}

}  // namespace ratelab::internal
