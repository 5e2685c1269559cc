#include "model/sliding_log_model.h"

#include <algorithm>

namespace ratelab {

Duration SlidingLogReach(const Policy& p) {
  return p.algorithm == Algorithm::kSlidingLogClosed ? p.window + Duration(1) : p.window;
}

namespace {

using Entries = std::vector<std::pair<Instant, int64_t>>;

// The decision at `now` of a log whose live entries are [live, entries.end()), `latest` the
// instant it decides as at (the model's: `now` or its latest admission, whichever is later).
Decision LogDecision(const Policy& p, const Entries& entries, Entries::const_iterator live,
                     Instant now, Instant latest, int64_t cost) {
  const Duration reach = SlidingLogReach(p);
  int64_t used = 0;
  for (auto it = live; it != entries.end(); ++it) used += it->second;

  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && used <= p.limit - cost;
  d.remaining = std::max<int64_t>(0, p.limit - used - (d.allowed ? cost : 0));
  if (d.allowed) {
    d.reset = latest + reach;
  } else {
    d.reset = live == entries.end() ? latest : entries.back().first + reach;
  }
  if (d.allowed) return d;
  if (cost > p.limit) {
    d.retry_after = kNever;
    return d;
  }
  // The earliest instant at which enough entries have expired to fit `cost`.
  int64_t still_used = used;
  for (auto it = live; it != entries.end(); ++it) {
    still_used -= it->second;
    if (still_used <= p.limit - cost) {
      d.retry_after = it->first + reach - now;
      break;
    }
  }
  return d;
}

// The first entry that counts at `at`: every one after it does too.
Entries::const_iterator FirstLive(const Policy& p, const Entries& entries, Instant at) {
  const Duration reach = SlidingLogReach(p);
  auto live = entries.begin();
  while (live != entries.end() && live->first <= at - reach) ++live;
  return live;
}

}  // namespace

Decision SlidingLogModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const Instant eff = entries.empty() ? now : std::max(now, entries.back().first);
  return LogDecision(p, entries, FirstLive(p, entries, eff), now, eff, cost);
}

void SlidingLogModel::Admit(const Policy& p, Instant now, int64_t cost) {
  const Instant eff = entries.empty() ? now : std::max(now, entries.back().first);
  Forget(p, eff);
  entries.emplace_back(eff, cost);
}

void SlidingLogModel::Forget(const Policy& p, Instant now) {
  entries.erase(entries.begin(), FirstLive(p, entries, now));
}

Decision SlidingLogSortedModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  // Every entry after now - W counts, later ones included.
  const Instant latest = entries.empty() ? now : std::max(now, entries.back().first);
  return LogDecision(p, entries, FirstLive(p, entries, now), now, latest, cost);
}

void SlidingLogSortedModel::Admit(const Policy& p, Instant now, int64_t cost) {
  entries.insert(std::upper_bound(entries.begin(), entries.end(), std::pair{now, cost}),
                 std::pair{now, cost});
  // A request at any instant counts a suffix of the entries, and one that counts N units or more
  // is denied whatever the rest, with a wait that only the newest N units decide: the older ones
  // change no answer, whatever instant a later request brings.
  size_t keep = entries.size();
  for (int64_t units = 0; keep > 0 && units < p.limit;) units += entries[--keep].second;
  entries.erase(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(keep));
}

void SlidingLogSortedModel::Forget(const Policy& p, Instant now) {
  entries.erase(entries.begin(), FirstLive(p, entries, now));
}

}  // namespace ratelab
