#include "impl/service/metrics.h"

#include <algorithm>
#include <cstdio>

namespace ratelab {

namespace {

// A label value, escaped as the text format wants ('\\', '"' and newlines).
std::string Label(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Seconds(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", s);
  return buffer;
}

}  // namespace

std::string_view ServiceMetrics::Name(Outcome outcome) {
  constexpr std::array<std::string_view, kOutcomes> kNames = {
      "allowed", "denied", "degraded-allowed", "degraded-denied"};
  return kNames[static_cast<size_t>(outcome)];
}

void ServiceMetrics::Decided(Outcome outcome, std::string_view rule_id) {
  std::lock_guard lock(mutex_);
  auto it = decisions_.find(rule_id);
  if (it == decisions_.end()) it = decisions_.emplace(std::string(rule_id), Counts{}).first;
  ++it->second[static_cast<size_t>(outcome)];
}

void ServiceMetrics::StoreFailed(const Status& status) {
  std::lock_guard lock(mutex_);
  ++store_failures_[absl::IsDeadlineExceeded(status) ? "timeout" : "error"];
}

void ServiceMetrics::Took(Duration d) {
  const double seconds = static_cast<double>(d.count()) / 1e9;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      buckets_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(d.count(), std::memory_order_relaxed);
}

std::string ServiceMetrics::Prometheus(std::optional<StoreGuard::Breaker> breaker) const {
  std::lock_guard lock(mutex_);
  std::string out =
      "# HELP ratelab_decisions_total Decisions, by outcome and by the rule that answered.\n"
      "# TYPE ratelab_decisions_total counter\n";
  for (size_t o = 0; o < kOutcomes; ++o) {
    for (const auto& [rule, counts] : decisions_) {
      if (counts[o] == 0) continue;
      out += "ratelab_decisions_total{outcome=\"" + std::string(Name(static_cast<Outcome>(o))) +
             "\",rule=\"" + Label(rule) + "\"} " + std::to_string(counts[o]) + "\n";
    }
  }
  out +=
      "# HELP ratelab_request_duration_seconds The time from a request read to its answer.\n"
      "# TYPE ratelab_request_duration_seconds histogram\n";
  // Read once each; a request counted while this is written may be in some and not others.
  const int64_t count = count_.load(std::memory_order_relaxed);
  const int64_t sum_nanos = sum_nanos_.load(std::memory_order_relaxed);
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    out += "ratelab_request_duration_seconds_bucket{le=\"" + Seconds(kBounds[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += "ratelab_request_duration_seconds_bucket{le=\"+Inf\"} " +
         std::to_string(std::max(count, cumulative)) + "\n";
  out += "ratelab_request_duration_seconds_sum " + Seconds(static_cast<double>(sum_nanos) / 1e9) +
         "\n";
  out += "ratelab_request_duration_seconds_count " + std::to_string(std::max(count, cumulative)) +
         "\n";
  out +=
      "# HELP ratelab_store_failures_total Calls to the store that failed, by kind.\n"
      "# TYPE ratelab_store_failures_total counter\n";
  for (const char* kind : {"error", "timeout"}) {
    const auto it = store_failures_.find(kind);
    out += "ratelab_store_failures_total{kind=\"" + std::string(kind) + "\"} " +
           std::to_string(it == store_failures_.end() ? 0 : it->second) + "\n";
  }
  if (breaker) {
    out +=
        "# HELP ratelab_breaker_state The circuit breaker's state: 1 for the one it is in.\n"
        "# TYPE ratelab_breaker_state gauge\n";
    for (const StoreGuard::Breaker b : {StoreGuard::Breaker::kClosed, StoreGuard::Breaker::kOpen,
                                        StoreGuard::Breaker::kHalfOpen}) {
      out += "ratelab_breaker_state{state=\"" + std::string(BreakerName(b)) + "\"} " +
             (b == *breaker ? "1" : "0") + "\n";
    }
  }
  return out;
}

}  // namespace ratelab
