#include "impl/rules/rules_limiter.h"

#include <algorithm>
#include <vector>

namespace ratelab {

Result<Protocol*> RulesLimiter::InstanceFor(const AppliedRule& applied) {
  const Rule& rule = *applied.rule;
  InstanceKey key{rule.rule_id, applied.policy.algorithm, applied.policy.limit,
                  applied.policy.window.count()};
  auto it = instances_.find(key);
  if (it == instances_.end()) {
    Result<std::unique_ptr<Protocol>> made = make_(rule);
    if (!made.ok()) return made.status();
    if (process_seed_) (*made)->SeedProcess(*process_seed_ + instances_.size());
    it = instances_.emplace(std::move(key), *std::move(made)).first;
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
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::optional<ScopeType> type = ScopeTypeFromName(request.scope_type);
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
  };
  std::vector<Ask> asks;
  for (const AppliedRule& applied : rules_().Match({&scope, 1}, request.endpoint)) {
    Result<Protocol*> protocol = InstanceFor(applied);
    if (!protocol.ok()) co_return protocol.status();
    const bool global = applied.rule->scope_type == ScopeType::kGlobal;
    asks.push_back({*protocol, Request{std::string(Name(applied.rule->scope_type)),
                                       global ? std::string(kAnyScopeValue) : request.scope_value,
                                       request.endpoint, request.cost, request.now}});
  }
  if (asks.empty()) co_return Decision{true, 0, 0, request.now, Duration(0)};
  std::optional<Decision> answer;
  for (const Ask& ask : asks) {
    Result<Decision> d = co_await ask.protocol->Decide(ctx, ask.request);
    if (!d.ok() || !d->allowed) co_return d;
    if (!answer) {
      answer = *d;
    } else {
      answer->remaining = std::min(answer->remaining, d->remaining);
    }
  }
  co_return *answer;
}

}  // namespace ratelab
