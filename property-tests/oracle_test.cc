// The O(n) oracles agree with brute force on small histories, and their witnesses prove what
// they claim.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "judge/oracles.h"

namespace ratelab::proptest {
namespace {

struct Admission {
  int key;
  int64_t at;
  int64_t cost;
};

History ToHistory(const std::vector<Admission>& in) {
  History h;
  for (const Admission& a : in) {
    HistoryEvent e;
    e.id = static_cast<int64_t>(h.size());
    e.key = std::string(1, static_cast<char>('a' + a.key));
    e.cost = a.cost;
    e.invoke = e.apply = e.complete = FromUnixNanos(a.at);
    e.decision = Decision{true, 0, 0, {}, {}};
    h.push_back(e);
  }
  return h;
}

rc::Gen<std::vector<Admission>> GenAdmissions() {
  return rc::gen::container<std::vector<Admission>>(rc::gen::construct<Admission>(
      rc::gen::inRange(0, 2), rc::gen::inRange<int64_t>(0, 40), rc::gen::inRange<int64_t>(1, 3)));
}

// Units admitted for `key` in [from, to] (closed) or [from, to) when `half_open`.
int64_t UnitsIn(const History& h, const std::string& key, int64_t from, int64_t to,
                bool half_open) {
  int64_t sum = 0;
  for (const HistoryEvent& e : h) {
    const int64_t t = ToUnixNanos(e.invoke);
    if (e.key == key && t >= from && (half_open ? t < to : t <= to)) sum += e.cost;
  }
  return sum;
}

int64_t WitnessUnits(const Violation& v) {
  int64_t sum = 0;
  for (const HistoryEvent& e : v.witness) sum += e.cost;
  return sum;
}

RC_GTEST_PROP(AnyWindowCapOracle, MatchesBruteForce, ()) {
  const History h = ToHistory(*GenAdmissions());
  const int64_t limit = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t w = *rc::gen::inRange<int64_t>(1, 15);
  int64_t brute_max = 0;
  for (const HistoryEvent& e : h) {
    const int64_t s = ToUnixNanos(e.invoke);
    brute_max = std::max(brute_max, UnitsIn(h, e.key, s, s + w, /*half_open=*/true));
  }
  const AnyWindowReport r = CheckAnyWindowCap(h, limit, Duration(w));
  RC_ASSERT(r.max_in_any_window == brute_max);
  RC_ASSERT(r.violations.empty() == (brute_max <= limit));
  for (const Violation& v : r.violations) {
    const Duration span = v.witness.back().invoke - v.witness.front().invoke;
    RC_ASSERT(span < Duration(w));
    RC_ASSERT(WitnessUnits(v) > limit);
    RC_ASSERT(WitnessUnits(v) - v.witness.front().cost <= limit);  // minimal
  }
}

RC_GTEST_PROP(AlignedWindowCapOracle, MatchesBruteForce, ()) {
  const History h = ToHistory(*GenAdmissions());
  const int64_t limit = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t w = *rc::gen::inRange<int64_t>(1, 15);
  int keys_over = 0;
  for (const std::string key : {"a", "b"}) {
    bool over = false;
    for (int64_t start = 0; start <= 40; start += w) {
      over = over || UnitsIn(h, key, start, start + w, /*half_open=*/true) > limit;
    }
    keys_over += over;
  }
  const std::vector<Violation> v = CheckAlignedWindowCap(h, limit, Duration(w));
  RC_ASSERT(static_cast<int>(v.size()) == keys_over);
  for (const Violation& each : v) RC_ASSERT(WitnessUnits(each) > limit);
}

RC_GTEST_PROP(BucketConformanceOracle, MatchesBruteForce, ()) {
  const History h = ToHistory(*GenAdmissions());
  const int64_t burst = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t interval = *rc::gen::inRange<int64_t>(1, 10);
  int keys_over = 0;
  for (const std::string key : {"a", "b"}) {
    bool over = false;
    for (int64_t s = 0; s <= 40; ++s) {
      for (int64_t e = s; e <= 40; ++e) {
        over = over || UnitsIn(h, key, s, e, /*half_open=*/false) > burst + (e - s) / interval;
      }
    }
    keys_over += over;
  }
  const std::vector<Violation> v = CheckBucketConformance(h, burst, Duration(interval));
  RC_ASSERT(static_cast<int>(v.size()) == keys_over);
  for (const Violation& each : v) {
    const Duration span = each.witness.back().invoke - each.witness.front().invoke;
    RC_ASSERT(WitnessUnits(each) > burst + span.count() / interval);
  }
}

}  // namespace
}  // namespace ratelab::proptest
