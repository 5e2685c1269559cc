// The rate-limit service as the fuzzers drive it: the seeds' rules decided in process, the admin
// API on a read-only store whose callers send "Bearer token", every request answered at once
// (an inline executor) at one instant in the middle of a minute.
#ifndef RATELAB_FUZZ_SERVICE_H_
#define RATELAB_FUZZ_SERVICE_H_

#include "impl/core/step.h"
#include "impl/core/task.h"
#include "impl/rules/rules_limiter.h"
#include "impl/rules/rules_store.h"
#include "impl/service/service.h"

namespace ratelab::fuzz {

struct FuzzedService {
  RuleSet rules = SeedServiceRules();
  RulesLimiter limiter{[this]() -> const RuleSet& { return rules; }, InProcessProtocols()};
  ReadOnlyRules store{rules, "fuzz.yaml"};
  RateLimitService service{limiter, AdminApi{&store, "token", {}}};
  InlineExecutor executor;

  HttpResponse Answer(const HttpRequest& request) {
    Context ctx(executor);
    return RunInline(
        service.Handle(ctx, request, FromUnixNanos(int64_t{1'767'225'630} * 1'000'000'000)));
  }
};

}  // namespace ratelab::fuzz

#endif  // RATELAB_FUZZ_SERVICE_H_
