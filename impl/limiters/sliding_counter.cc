#include <algorithm>

#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

SlidingCounter::State SlidingCounter::At(const State& s, int64_t t) const {
  if (s.start != kUnseen) {
    const int64_t since = t - s.start;  // below zero when time stepped back: the latest window
    if (since < window_) return s;
    if (since / window_ == 1) return State{s.start + window_, s.current, 0};
  }
  // A key never seen, or a whole window empty: the anchored windows start afresh here.
  return State{anchored_ ? t : FloorDiv(t, window_) * window_, 0, 0};
}

Decision SlidingCounter::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  // The roll to a new window is computed on a copy: a denial changes nothing.
  State r = At(s, t);
  const int64_t start = r.start;
  const int64_t elapsed = std::clamp<int64_t>(t - start, 0, window_ - 1);
  // Everything scaled by W: previous * (W - elapsed) + current * W against limit * W.
  const Int128 fading = Int128{r.previous} * (window_ - elapsed);
  const Int128 capacity = Int128{limit_} * window_;

  Decision d{.limit = limit_};
  if (cost <= limit_ && fading + Int128{r.current + cost} * window_ <= capacity + slack_) {
    r.current += cost;
    s = r;
    d.allowed = true;
  }
  const Int128 room = capacity - fading - Int128{r.current} * window_ + slack_;
  d.remaining = room <= 0 ? 0 : static_cast<int64_t>(room / window_);
  const int64_t reset = r.current > 0 ? start + 2 * window_ : r.previous > 0 ? start + window_ : t;
  d.reset = FromUnixNanos(reset);
  if (d.allowed) return d;
  if (cost > limit_) {
    d.retry_after = kNever;
    return d;
  }
  // Later in this window, if the previous window fades enough before it ends...
  const Int128 spare_now = Int128{limit_ - r.current - cost} * window_ + slack_;
  if (spare_now > 0 && r.previous > 0 && spare_now / r.previous > 0) {
    d.retry_after = Duration(start + window_ - static_cast<int64_t>(spare_now / r.previous) - t);
    return d;
  }
  // ...else in the next one, where this window's count fades in turn.
  const Int128 spare_next = Int128{limit_ - cost} * window_ + slack_;
  const Int128 fade = r.current == 0 ? Int128{window_} : spare_next / r.current;
  int64_t at = start + 2 * window_;
  if (fade >= window_) {
    at = start + window_;
  } else if (fade > 0) {
    at = start + 2 * window_ - static_cast<int64_t>(fade);
  }
  d.retry_after = Duration(at - t);
  return d;
}

}  // namespace ratelab::internal
