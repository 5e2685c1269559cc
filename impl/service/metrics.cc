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

// A metric family's HELP and TYPE lines.
void Family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

// One sample: NAME (with its labels, if any) and its value.
void Sample(std::string& out, std::string_view name, int64_t value) {
  out.append(name).append(" ").append(std::to_string(value)).append("\n");
}

}  // namespace

std::string_view ServiceMetrics::Name(Outcome outcome) {
  constexpr std::array<std::string_view, kOutcomes> kNames = {
      "allowed", "denied", "degraded-allowed", "degraded-denied"};
  return kNames[static_cast<size_t>(outcome)];
}

void ServiceMetrics::Shard::Decided(Outcome outcome, std::string_view rule_id) {
  std::lock_guard lock(mutex_);
  auto it = decisions_.find(rule_id);
  if (it == decisions_.end()) it = decisions_.emplace(std::string(rule_id), Counts{}).first;
  ++it->second[static_cast<size_t>(outcome)];
}

void ServiceMetrics::Shard::StoreFailed(const Status& status) {
  std::lock_guard lock(mutex_);
  ++store_failures_[absl::IsDeadlineExceeded(status) ? 1 : 0];
}

void ServiceMetrics::Shard::Took(Duration d) {
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

void ServiceMetrics::SetSources(Sources sources) {
  std::lock_guard lock(mutex_);
  sources_ = std::move(sources);
}

ServiceMetrics::Shard& ServiceMetrics::NewShard() {
  std::lock_guard lock(mutex_);
  return shards_.emplace_back();
}

std::string ServiceMetrics::Prometheus(std::optional<StoreGuard::Breaker> breaker) const {
  // Every shard summed.
  std::map<std::string, Shard::Counts> decisions;
  std::array<int64_t, 2> store_failures{};
  std::array<int64_t, kBounds.size()> buckets{};
  int64_t count = 0;
  Duration sum{};
  Sources sources;
  {
    std::lock_guard lock(mutex_);
    sources = sources_;
    for (const Shard& shard : shards_) {
      std::lock_guard shard_lock(shard.mutex_);
      for (const auto& [rule, counts] : shard.decisions_) {
        Shard::Counts& total = decisions[rule];
        for (size_t o = 0; o < kOutcomes; ++o) total[o] += counts[o];
      }
      for (size_t k = 0; k < store_failures.size(); ++k) {
        store_failures[k] += shard.store_failures_[k];
      }
      for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += shard.buckets_[i];
      count += shard.count_;
      sum += shard.sum_;
    }
  }
  std::string out;
  Family(out, "ratelab_decisions_total", "counter",
         "Decisions, by outcome and by the rule that answered.");
  for (size_t o = 0; o < kOutcomes; ++o) {
    for (const auto& [rule, counts] : decisions) {
      if (counts[o] == 0) continue;
      out += "ratelab_decisions_total{outcome=\"" + std::string(Name(static_cast<Outcome>(o))) +
             "\",rule=\"" + Label(rule) + "\"} " + std::to_string(counts[o]) + "\n";
    }
  }
  Family(out, "ratelab_request_duration_seconds", "histogram",
         "The time from a request read to its answer.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets[i];
    out += "ratelab_request_duration_seconds_bucket{le=\"" + Seconds(kBounds[i]) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  Sample(out, "ratelab_request_duration_seconds_bucket{le=\"+Inf\"}", count);
  out += "ratelab_request_duration_seconds_sum " + Seconds(static_cast<double>(sum.count()) / 1e9) +
         "\n";
  Sample(out, "ratelab_request_duration_seconds_count", count);
  Family(out, "ratelab_store_failures_total", "counter",
         "Calls to the store that failed, by kind. A call that timed out, or whose connection was "
         "lost once it was sent, may still take effect when the store catches up: its request was "
         "answered as failed (or by the failure policy) and may count all the same.");
  constexpr std::array<const char*, 2> kKinds = {"error", "timeout"};
  for (size_t k = 0; k < kKinds.size(); ++k) {
    Sample(out, "ratelab_store_failures_total{kind=\"" + std::string(kKinds[k]) + "\"}",
           store_failures[k]);
  }
  if (sources.connections) {
    const HttpServerCounts c = sources.connections();
    Family(out, "ratelab_connections_open", "gauge", "Connections open now.");
    Sample(out, "ratelab_connections_open", c.open);
    Family(out, "ratelab_connections_closed_total", "counter",
           "Connections closed to stay within --max-connections: the oldest idle one, for a new "
           "one (idle-for-room), or a new one at once when none was idle (refused).");
    Sample(out, "ratelab_connections_closed_total{reason=\"idle-for-room\"}", c.closed_for_room);
    Sample(out, "ratelab_connections_closed_total{reason=\"refused\"}", c.refused);
    Family(out, "ratelab_accept_errors_total", "counter",
           "Connections that could not be accepted (no file descriptor left), each retried after "
           "a pause.");
    Sample(out, "ratelab_accept_errors_total", c.accept_errors);
  }
  if (sources.keys) {
    const Keys k = sources.keys();
    Family(out, "ratelab_keys", "gauge", "Keys the in-process counters hold now.");
    Sample(out, "ratelab_keys", k.held);
    Family(out, "ratelab_keys_dropped_total", "counter",
           "In-process keys dropped: idle (an expired window, a full bucket: no decision "
           "changes), or in use (the least recently used, to stay within --max-keys: they start "
           "afresh, and may admit more than their rule allows).");
    Sample(out, "ratelab_keys_dropped_total{reason=\"idle\"}", k.dropped_idle);
    Sample(out, "ratelab_keys_dropped_total{reason=\"in-use\"}", k.evicted_in_use);
  }
  if (breaker) {
    Family(out, "ratelab_breaker_state", "gauge",
           "The circuit breaker's state: 1 for the one it is in.");
    for (const StoreGuard::Breaker b : {StoreGuard::Breaker::kClosed, StoreGuard::Breaker::kOpen,
                                        StoreGuard::Breaker::kHalfOpen}) {
      out += "ratelab_breaker_state{state=\"" + std::string(BreakerName(b)) + "\"} " +
             (b == *breaker ? "1" : "0") + "\n";
    }
  }
  return out;
}

}  // namespace ratelab
