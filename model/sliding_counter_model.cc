#include "model/sliding_counter_model.h"

#include <algorithm>

namespace ratelab {

SlidingCounterModel SlidingCounterModel::At(const Policy& p, Instant now) const {
  constexpr int64_t kUnseen = std::numeric_limits<int64_t>::min();
  if (p.AnchoredCounter()) {
    if (window_index == kUnseen) return SlidingCounterModel{0, 0, 0, now};
    const int64_t index =
        std::max(FloorDiv((now - origin).count(), p.window.count()), window_index);
    if (index == window_index) return *this;
    if (index == window_index + 1) return SlidingCounterModel{index, current, 0, origin};
    return SlidingCounterModel{0, 0, 0, now};  // a whole window empty: afresh from here
  }
  const int64_t index = std::max(AlignedWindowIndex(now, p.window), window_index);
  if (index == window_index) return *this;
  if (window_index != kUnseen && index == window_index + 1) {
    return SlidingCounterModel{index, current, 0};
  }
  return SlidingCounterModel{index, 0, 0};
}

Decision SlidingCounterModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const SlidingCounterModel s = At(p, now);
  const int64_t w = p.window.count();
  const Instant start = s.Start(p);
  // A request evaluated in a later window than its own `now` counts as at that window's start.
  const int64_t elapsed = std::clamp<int64_t>((now - start).count(), 0, w - 1);
  const Int128 capacity = Int128{p.limit} * w;
  auto weighted = [&](int64_t current_units) {
    return Int128{s.previous} * (w - elapsed) + Int128{current_units} * w;
  };
  // The floored convention rounds the previous window's weighted count down: a fraction of a
  // unit short of the next whole one is no unit, so each comparison has W - 1 (scaled) to spare.
  const Int128 slack{p.CounterSlack()};

  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && weighted(s.current + cost) <= capacity + slack;
  const int64_t current_after = s.current + (d.allowed ? cost : 0);
  const Int128 room = capacity - weighted(current_after) + slack;
  d.remaining = room <= 0 ? 0 : static_cast<int64_t>(room / w);
  if (current_after > 0) {
    d.reset = start + 2 * p.window;
  } else if (s.previous > 0) {
    d.reset = start + p.window;
  } else {
    d.reset = now;
  }
  if (d.allowed) return d;
  if (cost > p.limit) {
    d.retry_after = kNever;
    return d;
  }
  // Later in this window: need previous * (W - e) <= (N - current - cost) * W.
  const Int128 room_now = Int128{p.limit - s.current - cost} * w + slack;
  Instant at;
  if (room_now >= 0 && s.previous > 0 && room_now / s.previous > 0) {
    at = start + Duration(w - static_cast<int64_t>(room_now / s.previous));
  } else {
    // The next window, where this window's count becomes the previous one.
    const Int128 room_next = Int128{p.limit - cost} * w + slack;
    const Int128 k = s.current == 0 ? Int128{w} : room_next / s.current;
    if (k >= w) {
      at = start + p.window;
    } else if (k > 0) {
      at = start + 2 * p.window - Duration(static_cast<int64_t>(k));
    } else {
      at = start + 2 * p.window;
    }
  }
  d.retry_after = at - now;
  return d;
}

void SlidingCounterModel::Admit(const Policy& p, Instant now, int64_t cost) {
  *this = At(p, now);
  current += cost;
}

}  // namespace ratelab
