#include "reports/metrics.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "judge/oracles.h"

namespace ratelab {

namespace {

// Cost sent in the window (t - width, t] ending at each event of one key, as they come.
class WindowSum {
 public:
  explicit WindowSum(Duration width) : width_(width) {}
  void Reset() {
    in_.clear();
    sum_ = 0;
  }
  // Drops what left the window ending at `t`; returns what is left.
  int64_t At(Instant t) {
    while (!in_.empty() && t - in_.front().first >= width_) {
      sum_ -= in_.front().second;
      in_.pop_front();
    }
    return sum_;
  }
  void Add(Instant t, int64_t cost) {
    in_.emplace_back(t, cost);
    sum_ += cost;
  }

 private:
  Duration width_;
  std::deque<std::pair<Instant, int64_t>> in_;
  int64_t sum_ = 0;
};

// The claim's windows ending at one event: what the limiter admitted, what was offered, and what
// the exact limiter of the claim admitted, each including the event itself when it counts.
struct Windows {
  int64_t admitted = 0, offered = 0;
  bool exact_admits = false;  // whether the exact limiter admits the event
};

// Calls `visit(e, windows)` for each event of `o` in key order.
template <typename Visit>
void WalkWindows(const RunResult& c, const LimiterOutcome& o, Visit visit) {
  const std::vector<const HistoryEvent*> events = ByKeyInInvokeOrder(o.history);
  WindowSum admitted(c.window), offered(c.window), exact(c.window);
  for (size_t i = 0; i < events.size(); ++i) {
    const HistoryEvent& e = *events[i];
    if (i == 0 || events[i - 1]->key != e.key) {
      admitted.Reset();
      offered.Reset();
      exact.Reset();
    }
    admitted.At(e.invoke);
    offered.At(e.invoke);
    const bool exact_admits = exact.At(e.invoke) + e.cost <= c.limit;
    if (exact_admits) exact.Add(e.invoke, e.cost);
    if (e.admitted()) admitted.Add(e.invoke, e.cost);
    offered.Add(e.invoke, e.cost);
    visit(e, Windows{admitted.At(e.invoke), offered.At(e.invoke), exact_admits});
  }
}

std::optional<double> Jain(const std::vector<double>& x) {
  if (x.empty()) return std::nullopt;
  double sum = 0, squares = 0;
  for (double v : x) {
    sum += v;
    squares += v * v;
  }
  if (squares == 0) return 1.0;  // everyone got nothing: equal, if not generous
  return sum * sum / (static_cast<double>(x.size()) * squares);
}

}  // namespace

LimiterMetrics ComputeMetrics(const RunResult& c, const LimiterOutcome& o) {
  LimiterMetrics m;
  m.burst_ratio = c.limit > 0 ? static_cast<double>(o.max_in_any_window) / c.limit : 0;

  struct User {
    int64_t offered = 0, admitted = 0, peak_offered = 0;
  };
  std::map<std::string_view, User> users;
  WalkWindows(c, o, [&](const HistoryEvent& e, const Windows& w) {
    User& u = users[e.key];
    u.offered += 1;
    u.admitted += e.admitted();
    u.peak_offered = std::max(u.peak_offered, w.offered);
    if (e.admitted() && w.admitted > c.limit) ++m.over_admitted;
    if (e.denied() && w.admitted + e.cost <= c.limit) ++m.false_denials;
    m.exact_admitted += w.exact_admits;
  });
  std::vector<double> shares;
  for (const auto& [key, u] : users) {
    if (u.peak_offered > c.limit) {
      shares.push_back(static_cast<double>(u.admitted) / static_cast<double>(u.offered));
    }
  }
  m.fairness = Jain(shares);
  m.contended_users = static_cast<int64_t>(shares.size());

  if (o.state.keys > 0) {
    m.state_bytes_per_key = static_cast<double>(o.state.bytes) / static_cast<double>(o.state.keys);
  }
  int64_t steps = 0, answered = 0;
  std::vector<Duration> latencies;
  for (const HistoryEvent& e : o.history) {
    steps += static_cast<int64_t>(e.steps.size());
    if (!e.decision) continue;
    ++answered;
    latencies.push_back(e.complete - e.invoke);
  }
  m.steps_per_decision = answered > 0 ? static_cast<double>(steps) / answered : 0;
  std::sort(latencies.begin(), latencies.end());
  if (!latencies.empty()) {
    for (size_t p = 0; p <= 100; ++p) {
      // Nearest rank: the smallest latency with at least p% of the answers at or below it.
      const size_t rank = std::max<size_t>(1, (p * latencies.size() + 99) / 100);
      m.latency_cdf.push_back(latencies[rank - 1]);
    }
  }

  for (const FaultWindow& f : c.faults) {
    FaultOutcome out{f.what, f.from, f.to == f.from ? f.from + c.window : f.to, 0, 0, 0, 0};
    for (const HistoryEvent& e : o.history) {
      if (e.invoke < out.from || e.invoke >= out.to) continue;
      ++out.offered;
      out.admitted += e.admitted();
      out.denied += e.denied();
      out.unanswered += e.unanswered();
    }
    m.during_faults.push_back(std::move(out));
  }
  return m;
}

size_t Bins::Of(Instant t) const {
  if (t < start || count == 0) return 0;
  return std::min(count - 1, static_cast<size_t>((t - start) / width));
}

Bins ChooseBins(const RunResult& c) {
  constexpr int64_t kMaxBins = 120, kMinBins = 10, kPerBin = 2;
  std::optional<Instant> first, last;
  int64_t requests = 0;
  if (!c.limiters.empty()) {
    for (const HistoryEvent& e : c.limiters[0].history) {  // every limiter has the same traffic
      first = std::min(first.value_or(e.invoke), e.invoke);
      last = std::max(last.value_or(e.invoke), e.invoke);
      ++requests;
    }
  }
  if (!first) return {c.start, std::chrono::seconds(1), 1};
  const int64_t span = (*last - *first).count() + 1;
  // The narrowest round width that needs no more than kMaxBins bins, nor more than one bin for
  // every kPerBin requests (at least kMinBins): sparse traffic in narrow bins is a barcode.
  const int64_t most = std::min(kMaxBins, std::max(kMinBins, requests / kPerBin));
  constexpr int64_t kMs = 1'000'000, kS = 1000 * kMs;
  constexpr int64_t kRound[] = {kMs,       2 * kMs,   5 * kMs,   10 * kMs, 20 * kMs, 50 * kMs,
                                100 * kMs, 200 * kMs, 500 * kMs, kS,       2 * kS,   5 * kS,
                                10 * kS,   15 * kS,   30 * kS,   60 * kS,  120 * kS, 300 * kS,
                                600 * kS,  900 * kS,  1800 * kS, 3600 * kS};
  int64_t width = 0;
  for (int64_t w : kRound) {
    width = w;
    if ((span + w - 1) / w <= most) break;
  }
  width = std::max(width, (span + most - 1) / most);  // runs longer than `most` hours
  // Bins sit on the scenario's clock (edges at whole widths since its start) and cover the
  // requests, not the quiet before them.
  const Instant start = c.start + Duration(FloorDiv((*first - c.start).count(), width) * width);
  const int64_t count = (*last - start).count() / width + 1;
  return {start, Duration(width), static_cast<size_t>(count)};
}

TimeSeries ComputeSeries(const RunResult& c, const LimiterOutcome& o, const Bins& bins) {
  TimeSeries s;
  for (auto* v : {&s.offered, &s.admitted, &s.denied, &s.unanswered, &s.peak_in_window}) {
    v->assign(bins.count, 0);
  }
  for (const HistoryEvent& e : o.history) {
    const size_t b = bins.Of(e.invoke);
    ++s.offered[b];
    s.admitted[b] += e.admitted();
    s.denied[b] += e.denied();
    s.unanswered[b] += e.unanswered();
  }
  // What a key holds in the window ending at t only falls between its admissions, so the most in
  // a bin is at one of the bin's admissions or at its start, carried from admissions before it.
  std::map<std::string_view, std::vector<std::pair<Instant, int64_t>>> admitted;  // time, cost
  WalkWindows(c, o, [&](const HistoryEvent& e, const Windows& w) {
    if (!e.admitted()) return;
    int64_t& peak = s.peak_in_window[bins.Of(e.invoke)];
    peak = std::max(peak, w.admitted);
    admitted[e.key].emplace_back(e.invoke, e.cost);
  });
  for (const auto& entry : admitted) {
    const std::vector<std::pair<Instant, int64_t>>& times = entry.second;  // a lambda uses it
    std::vector<int64_t> sum(times.size() + 1, 0);  // sum[i]: cost of the first i admissions
    for (size_t i = 0; i < times.size(); ++i) sum[i + 1] = sum[i] + times[i].second;
    const auto index = [&](Instant t) {  // admissions before t
      return std::lower_bound(times.begin(), times.end(), std::pair(t, INT64_MIN)) - times.begin();
    };
    const size_t to = bins.Of(times.back().first + c.window);
    for (size_t b = bins.Of(times.front().first) + 1; b <= to && b < bins.count; ++b) {
      const Instant at = bins.start + static_cast<int64_t>(b) * bins.width;
      // In (at - window, at): after at - window, before at.
      const int64_t carried = sum[index(at)] - sum[index(at - c.window + Duration(1))];
      s.peak_in_window[b] = std::max(s.peak_in_window[b], carried);
    }
  }
  return s;
}

std::vector<UserShare> TopUsers(const RunResult& c, size_t n) {
  std::map<std::string, UserShare> users;
  for (size_t l = 0; l < c.limiters.size(); ++l) {
    for (const HistoryEvent& e : c.limiters[l].history) {
      UserShare& u = users[e.key];
      u.key = e.key;
      u.admitted.resize(c.limiters.size());
      if (l == 0) ++u.offered;  // every limiter sees the same traffic
      u.admitted[l] += e.admitted();
    }
  }
  std::vector<UserShare> out;
  for (auto& [key, u] : users) out.push_back(std::move(u));
  std::stable_sort(out.begin(), out.end(),
                   [](const UserShare& a, const UserShare& b) { return a.offered > b.offered; });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace ratelab
