#include <algorithm>

#include "impl/limiters/in_process_algorithms.h"

namespace ratelab::internal {

Decision SlidingLog::Decide(State& s, Instant now, int64_t cost) const {
  const int64_t t = ToUnixNanos(now);
  const int64_t eff = std::max(t, s.last);
  auto& log = s.entries;
  // Entries up to `head` expired before the latest admission and can never count again. Entries
  // that expire only relative to this request's `eff` are skipped, not dropped: a denial changes
  // nothing, and a later request with an earlier `now` may still see them.
  size_t first_live = s.head;
  int64_t used = s.used;
  while (first_live < log.size() && log[first_live].first <= eff - window_) {
    used -= log[first_live++].second;
  }

  Decision d{.limit = limit_, .remaining = limit_ - used};
  if (cost <= limit_ - used) {
    s.head = first_live;
    s.used = used + cost;
    s.last = eff;
    log.emplace_back(eff, cost);
    if (s.head >= 16 && 2 * s.head >= log.size()) {
      log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(s.head));
      s.head = 0;
    }
    d.allowed = true;
    d.remaining = limit_ - s.used;
    d.reset = FromUnixNanos(eff + window_);
    return d;
  }
  d.reset = FromUnixNanos(first_live < log.size() ? log.back().first + window_ : eff);
  if (cost > limit_) {
    d.retry_after = kNever;
    return d;
  }
  // Walk the live entries oldest first until enough have expired to fit `cost`.
  int64_t still_used = used;
  for (size_t i = first_live; i < log.size(); ++i) {
    still_used -= log[i].second;
    if (still_used <= limit_ - cost) {
      d.retry_after = Duration(log[i].first + window_ - t);
      break;
    }
  }
  return d;
}

}  // namespace ratelab::internal
