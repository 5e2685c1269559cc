#include "cli/policy_flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "impl/limiters/window_offset.h"

namespace ratelab {

namespace {
std::string Number(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}
}  // namespace

std::string PolicyFlags::Flags() const {
  std::string out;
  if (limit) out += " --limit " + std::to_string(*limit);
  if (window) out += " --window " + FormatDuration(*window);
  if (rate) out += " --rate " + nlohmann::json(*rate).dump();
  if (burst) out += " --burst " + std::to_string(*burst);
  if (window_offset) out += " --window-offset " + QuoteWord(*window_offset);
  return out;
}

void AddPolicyFlags(CLI::App& command, PolicyFlags& flags, const PolicyDefaults& defaults) {
  command.add_option(
      "--limit", flags.limit,
      "Window algorithms: N per window (default " + std::to_string(defaults.limit) + ")");
  AddParsed(command, "--window", flags.window, ParsePositiveDuration,
            "Window algorithms: W, e.g. 10s, 1m, 500ms (default " +
                FormatDuration(defaults.window) + ")");
  command.add_option(
      "--window-offset", flags.window_offset,
      "Aligned windows (fixed-window, sliding-counter): where each key's windows start, for a "
      "limiter that spreads its keys' resets: a duration, or a template over the key that gives "
      "one, e.g. '{key_crc32 % window_ms}ms' (default: at multiples of the window since the "
      "epoch)");
  command.add_option(
      "--rate", flags.rate,
      "Bucket algorithms: tokens per second (default " + Number(defaults.rate) + ")");
  command.add_option(
      "--burst", flags.burst,
      "Bucket algorithms: capacity (default " + std::to_string(defaults.burst) + ")");
}

Result<Policy> PolicyFromFlags(std::string_view name, Algorithm algorithm, const PolicyFlags& flags,
                               const PolicyDefaults& defaults) {
  const std::string what = std::string(name) + " is a " + std::string(AlgorithmName(algorithm));
  Policy policy;
  if (Describe(algorithm).bucket) {
    if (flags.limit || flags.window) {
      return absl::InvalidArgumentError(what +
                                        ": give --rate and --burst, not --limit and --window");
    }
    const std::optional<Duration> interval = IntervalOfRate(flags.rate.value_or(defaults.rate));
    if (!interval) {
      return absl::InvalidArgumentError(
          "--rate must be above 0 and at most 1000000 per second, and at least one token in 146 "
          "years");
    }
    policy = Policy::Bucket(algorithm, flags.burst.value_or(defaults.burst), *interval);
  } else {
    if (flags.rate || flags.burst) {
      return absl::InvalidArgumentError(what +
                                        ": give --limit and --window, not --rate and --burst");
    }
    policy = Policy::Window(algorithm, flags.limit.value_or(defaults.limit),
                            flags.window.value_or(defaults.window));
  }
  if (std::optional<std::string> problem = policy.Problem()) {
    return absl::InvalidArgumentError(*problem);
  }
  if (flags.window_offset) {
    Result<Policy> offset = WithWindowOffset(policy, *flags.window_offset);
    if (!offset.ok()) {
      return absl::InvalidArgumentError("--window-offset: " +
                                        std::string(offset.status().message()));
    }
    return offset;
  }
  return policy;
}

}  // namespace ratelab
