#include "impl/rules/rules_limiter.h"

#include <algorithm>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace ratelab {

Result<Protocol*> RulesLimiter::InstanceFor(const AppliedRule& applied) {
  const Rule& rule = *applied.rule;
  const InstanceKeyView key{rule.rule_id, applied.policy.algorithm, applied.policy.limit,
                            applied.policy.window.count()};
  auto it = instances_.find(key);
  if (it == instances_.end()) {
    Result<std::unique_ptr<Protocol>> made = make_(rule);
    if (!made.ok()) return made.status();
    if (process_seed_) (*made)->SeedProcess(*process_seed_ + instances_.size());
    it = instances_
             .emplace(InstanceKey{rule.rule_id, applied.policy.algorithm, applied.policy.limit,
                                  applied.policy.window.count()},
                      *std::move(made))
             .first;
  }
  return it->second.get();
}

void RulesLimiter::SeedProcess(uint64_t seed) {
  process_seed_ = seed;
  uint64_t i = 0;
  for (auto& [key, instance] : instances_) instance->SeedProcess(seed + i++);
}

StateSize RulesLimiter::ProcessState() const {
  StateSize s;
  for (const auto& [key, instance] : instances_) s += instance->ProcessState();
  return s;
}

Task<Result<Decision>> RulesLimiter::Decide(Context& ctx, const Request& request) {
  Result<Answer> answer = co_await DecideByRules(ctx, request);
  if (!answer.ok()) co_return answer.status();
  co_return answer->decision;
}

Task<Result<RulesLimiter::Answer>> RulesLimiter::DecideByRules(Context& ctx,
                                                               const Request& request) {
  return ByRules(ctx, request, true);
}

Task<Result<RulesLimiter::Answer>> RulesLimiter::PeekByRules(Context& ctx, const Request& request) {
  return ByRules(ctx, request, false);
}

Task<Result<RulesLimiter::Answer>> RulesLimiter::ByRules(Context& ctx, const Request& request,
                                                         bool spend) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::optional<ScopeType> type = ScopeTypeNamed(request.scope_type);
  if (!type) {
    co_return absl::InvalidArgumentError("scope_type: '" + request.scope_type +
                                         "' is not a scope type; expected " + ScopeTypeChoices());
  }
  const Scope scope{*type, request.scope_value};
  // Everything the decision needs is taken from the rules now: they may change while it waits
  // on its store.
  struct Ask {
    Protocol* protocol;
    Request request;
    AnsweringRule rule;
  };
  absl::InlinedVector<Ask, 2> asks;  // a scope's rule and the global one, in place
  for (const AppliedRule& applied : rules_().Match({&scope, 1}, request.endpoint)) {
    Result<Protocol*> protocol = InstanceFor(applied);
    if (!protocol.ok()) co_return protocol.status();
    // The request as the rule's protocol sees it: its key is the applied rule's (Key()).
    asks.push_back(
        {*protocol,
         Request{std::string(Name(applied.rule->scope_type)), std::string(applied.scope_value),
                 request.endpoint, request.cost, request.now},
         AnsweringRule(applied)});
  }
  if (asks.empty()) co_return Answer{Decision{true, 0, 0, request.now, Duration(0)}, std::nullopt};
  std::optional<Answer> answer;
  for (Ask& ask : asks) {
    // (Not a co_await in each arm of ?:, which GCC 12 miscompiles.)
    Result<Decision> d;
    if (spend) {
      d = co_await ask.protocol->Decide(ctx, ask.request);
    } else {
      d = co_await ask.protocol->Peek(ctx, ask.request);
    }
    if (!d.ok()) co_return d.status();
    if (!d->allowed) co_return Answer{*d, ask.rule};
    if (!answer) {
      answer = Answer{*d, ask.rule};
    } else {
      answer->decision.remaining = std::min(answer->decision.remaining, d->remaining);
    }
  }
  co_return *std::move(answer);
}

}  // namespace ratelab
