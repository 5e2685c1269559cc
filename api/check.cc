// ratelab's C++ API (api/ratelab/check.h): the user's limiter as a protocol of its own, searched
// and reported as `ratelab check --exec` searches and reports a limiter process.
#include "ratelab/check.h"

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "impl/core/request.h"
#include "impl/limiters/protocol.h"
#include "judge/checks.h"
#include "model/reference_model.h"
#include "reports/check_report.h"
#include "sim/protocol_under_test.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "sim/search.h"

namespace ratelab {
namespace {

// The user's limiter as a protocol: one instance per limiter process, made again at a restart,
// deciding at the run's clock when its step runs (the request's now in real mode).
class UserLimiterProtocol final : public Protocol {
 public:
  UserLimiterProtocol(api::MakeLimiter make, const Policy& policy, const Clock* clock)
      : make_(std::move(make)), policy_(policy), clock_(clock) {}

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override {
    if (Status s = Validate(request); !s.ok()) co_return s;
    const std::string key = LimiterKey(request);
    co_return co_await ctx.Step("decide", [&]() -> Result<Decision> {
      const Instant at = clock_ != nullptr ? clock_->Now() : request.now;
      try {
        if (limiter_ == nullptr) limiter_ = make_();
        if (limiter_ == nullptr) return absl::InternalError("the limiter's maker made none");
        Decision d;
        d.allowed = limiter_->Admit(key, request.cost, at);
        d.limit = policy_.limit;
        return d;
      } catch (const std::exception& e) {
        return absl::InternalError(std::string("the limiter threw: ") + e.what());
      } catch (...) {
        return absl::InternalError("the limiter threw something that is no std::exception");
      }
    });
  }

  void Restart() override { limiter_.reset(); }

 private:
  api::MakeLimiter make_;
  Policy policy_;
  const Clock* clock_;
  std::unique_ptr<api::Limiter> limiter_;  // made at its first decision
};

api::Verdict BadInput(const Status& s) {
  return {api::Outcome::kBadInput, 0, "bad input: " + std::string(s.message()) + "\n"};
}

// The policy `options` ask for, or what is wrong with it.
Result<Policy> PolicyOf(const api::Options& o) {
  const std::optional<Algorithm> model = AlgorithmNamed(o.model);
  if (!model) {
    return absl::InvalidArgumentError("model: unknown algorithm '" + o.model + "' (one of " +
                                      AlgorithmChoices() + ")");
  }
  Policy policy;
  if (Describe(*model).bucket) {
    const std::optional<Duration> interval = IntervalOfRate(o.rate);
    if (!interval) {
      return absl::InvalidArgumentError(
          "rate: tokens a second must be above 0 and at most 1000000, and at least one token in "
          "146 years");
    }
    policy = Policy::Bucket(*model, o.burst, *interval);
  } else {
    policy = Policy::Window(*model, o.limit, o.window);
  }
  if (std::optional<std::string> problem = policy.Problem()) {
    return absl::InvalidArgumentError("the policy: " + *problem);
  }
  return policy;
}

// The search `options` ask for, or what is wrong with them.
Result<SearchOptions> SearchOf(const api::Options& o) {
  Result<Policy> policy = PolicyOf(o);
  if (!policy.ok()) return policy.status();
  if (Status s = CheckCaseSize(*policy, kDefaultMaxSimulated); !s.ok()) return s;
  if (o.seeds < 1 || o.seeds > 1'000'000 || o.first_seed < 1 ||
      o.first_seed > UINT64_MAX - o.seeds) {
    return absl::InvalidArgumentError(
        "seeds: search from a first seed of at least 1, at least 1 seed and at most 1000000");
  }
  if (o.resolution < Duration(1)) {
    return absl::InvalidArgumentError("resolution: at least a nanosecond");
  }
  SearchOptions search;
  search.base.policy = *policy;
  search.base.start = kDefaultScenarioStart;
  if (!o.checks.empty()) {
    Result<std::vector<CheckId>> checks = ParseCheckList(o.checks);
    if (!checks.ok()) return checks.status();
    search.base.checks = *checks;
  }
  Result<SearchFaults> faults = ParseSearchFaults(o.faults);
  if (!faults.ok()) return faults.status();
  search.faults = *faults;
  search.concurrency = 1;  // one process: the test's own
  search.seeds = {o.first_seed, o.first_seed + o.seeds - 1, 1};
  return search;
}

}  // namespace

namespace api {

Verdict Check(const MakeLimiter& make, const Options& options) {
  if (!make) return BadInput(absl::InvalidArgumentError("no maker of limiters given"));
  Result<SearchOptions> search = SearchOf(options);
  if (!search.ok()) return BadInput(search.status());
  UserInProcess user;
  user.name = options.name;
  user.model = search->base.policy.algorithm;
  user.resolution = options.resolution;
  user.make = [make](const Policy& policy, const Stores& stores) {
    return std::unique_ptr<Protocol>(
        std::make_unique<UserLimiterProtocol>(make, policy, stores.clock));
  };
  const std::shared_ptr<const ProtocolInfo> protocol = InProcessProtocol(user);
  if (options.checks.empty()) search->base.checks = DefaultChecks(*protocol);
  Result<SearchResult> result = Search(protocol, *search);
  if (!result.ok()) return BadInput(result.status());
  const uint64_t seed = result->failure   ? result->failure->seed
                        : result->finding ? result->finding->seed
                                          : 0;
  const std::string replay = "options.first_seed = " + std::to_string(seed) +
                             " and options.seeds = 1 (ratelab::api::Check)";
  const CheckReport report = MakeCheckReport(protocol, *search, *result, replay);
  Verdict verdict;
  verdict.outcome = report.verdict == CheckVerdict::kViolation ? Outcome::kViolation
                    : report.verdict == CheckVerdict::kFailure ? Outcome::kLimiterFailed
                                                               : Outcome::kNothingFound;
  verdict.seed = seed;
  verdict.text = RenderCheckText(report);
  return verdict;
}

std::vector<bool> ModelDecisions(const Options& options, const std::vector<Request>& requests) {
  Result<Policy> policy = PolicyOf(options);
  if (!policy.ok()) throw std::invalid_argument(std::string(policy.status().message()));
  std::unique_ptr<ReferenceModel> model = MakeReferenceModel(*policy);
  std::vector<bool> admitted;
  admitted.reserve(requests.size());
  for (const Request& r : requests) {
    if (r.cost < 1) throw std::invalid_argument("a request's cost must be at least 1");
    admitted.push_back(model->Decide(r.key, r.at, r.cost).allowed);
  }
  return admitted;
}

}  // namespace api
}  // namespace ratelab
