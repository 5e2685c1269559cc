#include "impl/service/metrics.h"

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

void ServiceMetrics::Decided(std::string_view outcome, std::string_view rule_id) {
  std::lock_guard lock(mutex_);
  ++decisions_[{std::string(outcome), std::string(rule_id)}];
}

void ServiceMetrics::StoreFailed(const Status& status) {
  std::lock_guard lock(mutex_);
  ++store_failures_[absl::IsDeadlineExceeded(status) ? "timeout" : "error"];
}

void ServiceMetrics::Took(Duration d) {
  const double seconds = static_cast<double>(d.count()) / 1e9;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) {
      ++buckets_[i];
      break;
    }
  }
  ++count_;
  sum_ += d;
}

std::string ServiceMetrics::Prometheus(std::optional<StoreGuard::Breaker> breaker) const {
  std::lock_guard lock(mutex_);
  std::string out =
      "# HELP ratelab_decisions_total Decisions, by outcome and by the rule that answered.\n"
      "# TYPE ratelab_decisions_total counter\n";
  for (const auto& [key, n] : decisions_) {
    out += "ratelab_decisions_total{outcome=\"" + Label(key.first) + "\",rule=\"" +
           Label(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  out +=
      "# HELP ratelab_request_duration_seconds The time from a request read to its answer.\n"
      "# TYPE ratelab_request_duration_seconds histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i];
    out += "ratelab_request_duration_seconds_bucket{le=\"" + Seconds(kBounds[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += "ratelab_request_duration_seconds_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += "ratelab_request_duration_seconds_sum " +
         Seconds(static_cast<double>(sum_.count()) / 1e9) + "\n";
  out += "ratelab_request_duration_seconds_count " + std::to_string(count_) + "\n";
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
