#include "sim/traffic.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "model/named.h"

namespace ratelab {

void ConstantTraffic::Generate(Random&, std::vector<Arrival>& out) const {
  for (int64_t i = 0; i < count_; ++i) out.push_back({start_ + i * interval_, user_});
}

std::string ConstantTraffic::Describe() const {
  return "user " + user_ + ": one request every " + FormatDuration(interval_) + " from " +
         FormatInstant(start_) + ", " + std::to_string(count_) + " requests";
}

void BoundaryAttackTraffic::Generate(Random&, std::vector<Arrival>& out) const {
  const Duration step = spread_ / std::max<int64_t>(per_side_, 1);
  for (int64_t i = 0; i < per_side_; ++i) {
    out.push_back({edge_ - spread_ + i * step, user_});
  }
  for (int64_t i = 0; i < per_side_; ++i) out.push_back({edge_ + unsure_ + i * step, user_});
}

std::string BoundaryAttackTraffic::Describe() const {
  const std::string after = unsure_ == Duration{} ? "after"
                                                  : "after " + FormatInstant(edge_ + unsure_) +
                                                        " (the edge lies between them)";
  return "user " + user_ + ": boundary attack, " + std::to_string(per_side_) + " in the " +
         FormatDuration(spread_) + " before " + FormatInstant(edge_) + " and " +
         std::to_string(per_side_) + " in the " + FormatDuration(spread_) + " " + after;
}

void BurstTraffic::Generate(Random&, std::vector<Arrival>& out) const {
  for (int64_t i = 0; i < count_; ++i) out.push_back({at_, user_});
}

std::string BurstTraffic::Describe() const {
  return "user " + user_ + ": burst of " + std::to_string(count_) + " at " + FormatInstant(at_);
}

void ZipfUsersTraffic::Generate(Random& random, std::vector<Arrival>& out) const {
  std::vector<double> cdf(static_cast<size_t>(users_));
  double total = 0;
  for (int64_t i = 0; i < users_; ++i) {
    total += 1.0 / std::pow(static_cast<double>(i + 1), exponent_);
    cdf[static_cast<size_t>(i)] = total;
  }
  for (Instant t = start_ + random.Exponential(mean_gap_); t < start_ + duration_;
       t += random.Exponential(mean_gap_)) {
    const double u = random.UniformDouble() * total;
    const auto rank = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    out.push_back({t, "u" + std::to_string(std::min<int64_t>(rank, users_ - 1) + 1)});
  }
}

std::string ZipfUsersTraffic::Describe() const {
  return std::to_string(users_) + " users, Zipf popularity (exponent " +
         std::to_string(exponent_).substr(0, 4) + "), Poisson arrivals every " +
         FormatDuration(mean_gap_) + " on average for " + FormatDuration(duration_);
}

void PoissonTraffic::Generate(Random& random, std::vector<Arrival>& out) const {
  for (Instant t = start_ + random.Exponential(mean_gap_); t < start_ + duration_;
       t += random.Exponential(mean_gap_)) {
    out.push_back({t, user_});
  }
}

std::string PoissonTraffic::Describe() const {
  return "user " + user_ + ": Poisson arrivals every " + FormatDuration(mean_gap_) +
         " on average for " + FormatDuration(duration_) + " from " + FormatInstant(start_);
}

void DiurnalTraffic::Generate(Random& random, std::vector<Arrival>& out) const {
  // Thinning: candidates at the peak rate, each kept with probability rate(t) / peak.
  constexpr double kTwoPi = 6.283185307179586;
  for (Instant t = start_ + random.Exponential(peak_gap_); t < start_ + duration_;
       t += random.Exponential(peak_gap_)) {
    const double phase =
        static_cast<double>((t - start_).count()) / static_cast<double>(period_.count());
    const double level = trough_ + (1 - trough_) * (1 - std::cos(kTwoPi * phase)) / 2;
    if (random.UniformDouble() >= level) continue;
    out.push_back({t, "u" + std::to_string(random.Uniform(0, users_) + 1)});
  }
}

std::string DiurnalTraffic::Describe() const {
  return std::to_string(users_) + " users, diurnal: rate from " +
         std::to_string(static_cast<int>(trough_ * 100)) + "% to 100% of one request every " +
         FormatDuration(peak_gap_) + " over a period of " + FormatDuration(period_) + ", for " +
         FormatDuration(duration_);
}

void ReplayTraffic::Generate(Random&, std::vector<Arrival>& out) const {
  out.insert(out.end(), arrivals_.begin(), arrivals_.end());
}

std::string ReplayTraffic::Describe() const {
  return "replay of " + source_ + ": " + std::to_string(arrivals_.size()) + " requests";
}

std::span<const TrafficInfo> TrafficGenerators() { return kTrafficKinds; }

std::string_view TrafficKindName(TrafficKind kind) {
  return NameOf<TrafficInfo>(kTrafficKinds, kind);
}

namespace {
// Arrivals in `duration` at one every `gap` on average.
double PerGap(Duration duration, Duration gap) {
  return static_cast<double>(duration.count()) /
         static_cast<double>(std::max<int64_t>(1, gap.count()));
}
}  // namespace

double ConstantTraffic::ExpectedCount() const { return static_cast<double>(count_); }
double BoundaryAttackTraffic::ExpectedCount() const { return 2.0 * static_cast<double>(per_side_); }
double BurstTraffic::ExpectedCount() const { return static_cast<double>(count_); }
double ZipfUsersTraffic::ExpectedCount() const { return PerGap(duration_, mean_gap_); }
double PoissonTraffic::ExpectedCount() const { return PerGap(duration_, mean_gap_); }
// The peak rate thinned by the mean of the level over the period: (1 + trough) / 2.
double DiurnalTraffic::ExpectedCount() const {
  return PerGap(duration_, peak_gap_) * (1 + trough_) / 2;
}
double ReplayTraffic::ExpectedCount() const { return static_cast<double>(arrivals_.size()); }

double ExpectedCount(const std::vector<std::unique_ptr<TrafficGenerator>>& generators) {
  double n = 0;
  for (const auto& g : generators) n += g->ExpectedCount();
  return n;
}

double ReplayTraffic::ExpectedKeyBytes() const {
  if (arrivals_.empty()) return kTypicalKeyBytes;
  double bytes = 0;
  for (const Arrival& a : arrivals_)
    bytes += static_cast<double>(a.user.size() + a.endpoint.size());
  return bytes / static_cast<double>(arrivals_.size());
}

double ExpectedKeyBytes(const std::vector<std::unique_ptr<TrafficGenerator>>& generators) {
  double n = 0, bytes = 0;
  for (const auto& g : generators) {
    n += g->ExpectedCount();
    bytes += g->ExpectedCount() * g->ExpectedKeyBytes();
  }
  return n > 0 ? bytes / n : TrafficGenerator::kTypicalKeyBytes;
}

std::vector<Arrival> GenerateAll(const std::vector<std::unique_ptr<TrafficGenerator>>& generators,
                                 const Random& random) {
  std::vector<Arrival> all;
  for (size_t i = 0; i < generators.size(); ++i) {
    Random stream = random.Fork(i + 1);
    generators[i]->Generate(stream, all);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
  return all;
}

void EndpointTraffic::Generate(Random& random, std::vector<Arrival>& out) const {
  const size_t first = out.size();
  inner_->Generate(random, out);
  for (size_t i = first; i < out.size(); ++i) out[i].endpoint = endpoint_;
}

}  // namespace ratelab
