#include "live/probe_schedule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sim/random.h"

namespace ratelab {

Result<std::vector<ProbeSlot>> ProbeSchedule(const ProbePlan& plan, const Policy& policy,
                                             int64_t most, const std::optional<ProbeEdge>& edge) {
  std::vector<ProbeSlot> out;
  const auto add = [&](Duration at, int64_t user) {
    if (static_cast<int64_t>(out.size()) >= most || at >= plan.duration) return false;
    out.push_back({at, user});
    return true;
  };
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
  };
  switch (plan.traffic) {
    case ProbeTraffic::kSteady:
      for (int64_t n = 0;
           add(seconds(static_cast<double>(n) / plan.max_per_second), n % plan.users); ++n) {
      }
      break;
    case ProbeTraffic::kPoisson: {
      Random random(plan.seed);
      const Duration mean_gap = seconds(2 / plan.max_per_second);
      for (Duration at{}; add(at, random.Uniform(0, plan.users));
           at += random.Exponential(mean_gap)) {
      }
      break;
    }
    case ProbeTraffic::kBursts: {
      const int64_t size = plan.burst_size > 0 ? plan.burst_size : 2 * policy.limit;
      const Duration every =
          std::max<Duration>(policy.ClaimWindow() / plan.users, std::chrono::milliseconds(10));
      for (int64_t b = 0;; ++b) {
        for (int64_t i = 0; i < size; ++i) {
          if (!add(b * every, b % plan.users)) return out;
        }
      }
    }
    case ProbeTraffic::kBoundary: {
      if (!edge) return absl::InternalError("boundary traffic without the window's edge");
      // The limit spread over `spread` just before the edge could be, and again just after:
      // all of it in a span the window's length holds, with half a second to spare.
      const Duration unsure = edge->latest - edge->earliest;
      const Duration spare = std::chrono::milliseconds(500);
      const Duration least_spread = std::chrono::milliseconds(100);
      const Duration spread =
          std::min<Duration>(std::chrono::seconds(1), (policy.window - unsure - spare) / 2);
      if (policy.IsBucket()) return absl::InternalError("boundary traffic on a bucket model");
      if (spread < least_spread) {
        return absl::FailedPreconditionError(
            absl::StrCat("boundary traffic needs a window of at least ",
                         FormatDuration(unsure + spare + 2 * least_spread),
                         ": the server's reset header leaves its edge ", FormatDuration(unsure),
                         " unsure, and the attack must fit in one window"));
      }
      if (edge->latest + spread > plan.duration) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the server's window ends ", FormatDuration(edge->latest),
            " after the start, but --duration is ", FormatDuration(plan.duration),
            ": boundary traffic needs --duration ",
            FormatDuration(std::chrono::ceil<std::chrono::seconds>(edge->latest + 2 * spread)),
            " or more"));
      }
      const int64_t side = policy.limit;
      for (int64_t i = 0; i < side; ++i) add(edge->earliest - spread + i * spread / side, 0);
      for (int64_t i = 0; i < side; ++i) add(edge->latest + i * spread / side, 0);
      break;
    }
  }
  return out;
}

}  // namespace ratelab
