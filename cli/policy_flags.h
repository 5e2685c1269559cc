// The flags that give a protocol its policy, shared by the commands that take one: --limit and
// --window for the window algorithms (and --window-offset for the aligned ones), --rate and
// --burst for the buckets.
#ifndef RATELAB_CLI_POLICY_FLAGS_H_
#define RATELAB_CLI_POLICY_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "model/policy.h"

namespace CLI {
class App;
}

namespace ratelab {

// As given; unset when left out.
struct PolicyFlags {
  std::optional<int64_t> limit;
  std::optional<Duration> window;
  std::optional<double> rate;  // tokens per second
  std::optional<int64_t> burst;
  // Where each key's aligned windows start: a template over the key
  // (impl/limiters/window_offset.h).
  std::optional<std::string> window_offset;

  // " --limit N --window W --rate R --burst B --window-offset 'O'", of those given, for a
  // reproduce line.
  std::string Flags() const;
};

// What a flag left out means.
struct PolicyDefaults {
  int64_t limit;
  Duration window;
  double rate;
  int64_t burst;
};

// The policy every command that takes these flags holds a limiter to when they are left out:
// 2 per 10s for the window algorithms, a bucket of 1 refilling one a second. One default, so that
// a limiter checked, measured, stressed and probed is held to the same promise; a small one, as
// the bugs a limit shows a smaller one shows too, with fewer requests in each witness.
inline constexpr PolicyDefaults kDefaultPolicy = {
    .limit = 2, .window = std::chrono::seconds(10), .rate = 1.0, .burst = 1};

// Adds --limit, --window, --window-offset, --rate and --burst to `command`, each help naming its
// default.
void AddPolicyFlags(CLI::App& command, PolicyFlags& flags, const PolicyDefaults& defaults);

// The policy `flags` give protocol `name`, whose algorithm is `algorithm`: InvalidArgument
// naming the flag when they give the other family's flags, a rate IntervalOfRate refuses, a
// window offset the algorithm has no use for or that gives no duration, or a policy the
// algorithm refuses. A rate becomes an emission interval by IntervalOfRate (model/policy.h).
Result<Policy> PolicyFromFlags(std::string_view name, Algorithm algorithm, const PolicyFlags& flags,
                               const PolicyDefaults& defaults);

}  // namespace ratelab

#endif  // RATELAB_CLI_POLICY_FLAGS_H_
