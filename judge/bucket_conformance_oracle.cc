// The token-bucket conformance oracle.
#include <algorithm>

#include "judge/oracles.h"
#include "judge/oracles_internal.h"

namespace ratelab {

namespace {

// What admitting `cost` needs of the bucket's level (tokens * interval).
Int128 Needed(int64_t cost, Duration interval, BucketCredit credit) {
  return credit == BucketCredit::kOneToken ? Int128{interval.count()}
                                           : Int128{cost} * interval.count();
}

}  // namespace

std::vector<Violation> CheckBucketConformance(const History& h, int64_t burst, Duration interval,
                                              BucketCredit credit) {
  std::vector<Violation> out;
  const Int128 full = Int128{burst} * interval.count();
  auto admitted = [](const HistoryEvent& e) { return e.admitted(); };
  for (const auto& [key, events] : internal::GroupByKey(h, admitted)) {
    Int128 level = full;
    size_t last_full = 0;  // the bucket was full just before this event
    int64_t used_since_full = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      if (i > 0) {
        const Int128 refilled = level + (events[i]->invoke - events[i - 1]->invoke).count();
        if (refilled >= full) {
          level = full;
          last_full = i;
          used_since_full = 0;
        } else {
          level = refilled;
        }
      }
      const bool short_of = level < Needed(events[i]->cost, interval, credit);
      level -= Int128{events[i]->cost} * interval.count();
      used_since_full += events[i]->cost;
      if (short_of) {
        const Duration span = events[i]->invoke - events[last_full]->invoke;
        const int64_t bound = burst + span.count() / interval.count();
        out.push_back(
            {CheckId::kBucketConformance, std::string(key),
             std::to_string(used_since_full) + " admitted in [" +
                 FormatInstantTo(events[last_full]->invoke, 3) + ", " +
                 FormatInstantTo(events[i]->invoke, 3) + "] (span " + FormatDurationTo(span, 3) +
                 "), bucket allows at most " + std::to_string(burst) + " + " +
                 FormatDurationTo(span, 3) + " / " + FormatDuration(interval) + " = " +
                 std::to_string(bound) +
                 (credit == BucketCredit::kOneToken ? ", the last admitted counting 1 on credit"
                                                    : ""),
             internal::Copy(events, last_full, i + 1), std::nullopt,
             Violation::Bucket{burst, interval}});
        break;
      }
    }
  }
  return out;
}

int64_t MostOverBucket(const History& h, int64_t burst, Duration interval, BucketCredit credit) {
  const Int128 full = Int128{burst} * interval.count();
  Int128 lowest = 0;
  auto admitted = [](const HistoryEvent& e) { return e.admitted(); };
  for (const auto& [key, events] : internal::GroupByKey(h, admitted)) {
    Int128 level = full;
    for (size_t i = 0; i < events.size(); ++i) {
      if (i > 0)
        level = std::min(full, level + (events[i]->invoke - events[i - 1]->invoke).count());
      // Short of what it needs by the same as a whole cost's bucket below zero.
      lowest = std::min(lowest, level - Needed(events[i]->cost, interval, credit));
      level -= Int128{events[i]->cost} * interval.count();
    }
  }
  // Below empty by L: ceil(L / T) units over the bound of the span since the bucket was last full.
  const Int128 t = interval.count();
  return static_cast<int64_t>((-lowest + t - 1) / t);
}

}  // namespace ratelab
