#include "model/sliding_log_model.h"

#include <algorithm>

namespace ratelab {

namespace {
Instant EffectiveNow(const std::vector<std::pair<Instant, int64_t>>& entries, Instant now) {
  return entries.empty() ? now : std::max(now, entries.back().first);
}
}  // namespace

Duration SlidingLogReach(const Policy& p) {
  return p.algorithm == Algorithm::kSlidingLogClosed ? p.window + Duration(1) : p.window;
}

Decision SlidingLogModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const Instant eff = EffectiveNow(entries, now);
  const Duration reach = SlidingLogReach(p);
  // Live entries are a suffix: those with t > eff - W.
  auto first_live = entries.begin();
  while (first_live != entries.end() && first_live->first <= eff - reach) ++first_live;
  int64_t used = 0;
  for (auto it = first_live; it != entries.end(); ++it) used += it->second;

  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && used <= p.limit - cost;
  d.remaining = std::max<int64_t>(0, p.limit - used - (d.allowed ? cost : 0));
  if (d.allowed) {
    d.reset = eff + reach;
  } else {
    d.reset = first_live == entries.end() ? eff : entries.back().first + reach;
  }
  if (d.allowed) return d;
  if (cost > p.limit) {
    d.retry_after = kNever;
    return d;
  }
  // The earliest instant at which enough entries have expired to fit `cost`.
  int64_t still_used = used;
  for (auto it = first_live; it != entries.end(); ++it) {
    still_used -= it->second;
    if (still_used <= p.limit - cost) {
      d.retry_after = it->first + reach - now;
      break;
    }
  }
  return d;
}

void SlidingLogModel::Admit(const Policy& p, Instant now, int64_t cost) {
  const Instant eff = EffectiveNow(entries, now);
  const Duration reach = SlidingLogReach(p);
  std::erase_if(entries, [&](const auto& e) { return e.first <= eff - reach; });
  entries.emplace_back(eff, cost);
}

void SlidingLogModel::Forget(const Policy& p, Instant now) {
  const Duration reach = SlidingLogReach(p);
  auto live = entries.begin();
  while (live != entries.end() && live->first <= now - reach) ++live;
  entries.erase(entries.begin(), live);
}

}  // namespace ratelab
