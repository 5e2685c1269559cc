#include "live/probe_schedule.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "absl/strings/str_cat.h"
#include "sim/traffic.h"

namespace ratelab {

namespace {

// The load is made by the simulator's traffic generators (sim/traffic.h), on a clock whose epoch
// is the load's start, with users named as theirs are: "u1".."uN".
constexpr Instant kLoadStart{};

std::string UserName(int64_t user) { return "u" + std::to_string(user + 1); }

int64_t UserNumber(const std::string& name) {
  int64_t n = 1;
  std::from_chars(name.data() + 1, name.data() + name.size(), n);
  return n - 1;
}

Duration Seconds(double s) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
}

// Boundary traffic: the limit spread over `spread` just before the edge could be, and again just
// after it surely is: all of it in a span the window's length holds, with half a second to spare.
Result<std::unique_ptr<TrafficGenerator>> BoundaryLoad(const ProbePlan& plan, const Policy& policy,
                                                       const std::optional<ProbeEdge>& edge) {
  if (!edge) return absl::InternalError("boundary traffic without the window's edge");
  if (policy.IsBucket()) return absl::InternalError("boundary traffic on a bucket model");
  const Duration unsure = edge->latest - edge->earliest;
  const Duration spare = std::chrono::milliseconds(500);
  const Duration least_spread = std::chrono::milliseconds(100);
  const Duration spread =
      std::min<Duration>(std::chrono::seconds(1), (policy.window - unsure - spare) / 2);
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
  return std::unique_ptr<TrafficGenerator>(std::make_unique<BoundaryAttackTraffic>(
      UserName(0), kLoadStart + edge->earliest, spread, policy.limit, unsure));
}

}  // namespace

Result<std::vector<ProbeSlot>> ProbeSchedule(const ProbePlan& plan, const Policy& policy,
                                             int64_t most, const std::optional<ProbeEdge>& edge) {
  std::vector<std::unique_ptr<TrafficGenerator>> load;
  switch (plan.traffic) {
    case TrafficKind::kConstant: {
      // One request every 1/rate, the users in turn: each user's every users/rate.
      const Duration gap = Seconds(1 / plan.max_per_second);
      const int64_t total = std::min<int64_t>(
          most, static_cast<int64_t>(std::chrono::duration<double>(plan.duration).count() *
                                     plan.max_per_second) +
                    1);
      for (int64_t user = 0; user < std::min<int64_t>(plan.users, total); ++user) {
        load.push_back(std::make_unique<ConstantTraffic>(
            UserName(user), kLoadStart + user * gap, plan.users * gap,
            (total - user + plan.users - 1) / plan.users));
      }
      break;
    }
    case TrafficKind::kPoisson:
      // Half the rate on average, each request from a user drawn uniformly.
      load.push_back(std::make_unique<ZipfUsersTraffic>(plan.users, 0.0, kLoadStart, plan.duration,
                                                        Seconds(2 / plan.max_per_second)));
      break;
    case TrafficKind::kBurst: {
      // Twice the limit at once (or --burst-size), a user each, one each window divided by the
      // users.
      const int64_t size = plan.burst_size > 0 ? plan.burst_size : 2 * policy.limit;
      const Duration every =
          std::max<Duration>(policy.ClaimWindow() / plan.users, std::chrono::milliseconds(10));
      for (int64_t b = 0; b * every < plan.duration && b * size < most; ++b) {
        load.push_back(
            std::make_unique<BurstTraffic>(UserName(b % plan.users), kLoadStart + b * every, size));
      }
      break;
    }
    case TrafficKind::kBoundaryAttack: {
      Result<std::unique_ptr<TrafficGenerator>> attack = BoundaryLoad(plan, policy, edge);
      if (!attack.ok()) return attack.status();
      load.push_back(*std::move(attack));
      break;
    }
    case TrafficKind::kZipfUsers:  // not a probe's (CheckProbePlan refuses them)
    case TrafficKind::kDiurnal:
    case TrafficKind::kReplay:
      return absl::InvalidArgumentError("--traffic: a probe does not send " +
                                        std::string(TrafficKindName(plan.traffic)) + " traffic");
  }
  std::vector<ProbeSlot> out;
  for (const Arrival& a : GenerateAll(load, Random(plan.seed))) {
    const Duration at = a.at - kLoadStart;
    if (static_cast<int64_t>(out.size()) >= most || at >= plan.duration) break;
    out.push_back({at, UserNumber(a.user)});
  }
  return out;
}

}  // namespace ratelab
