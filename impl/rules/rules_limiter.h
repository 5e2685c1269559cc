// A limiter that decides by rules (the limit service's rate-limiting service): for each request it
// matches the rules in force (RuleSet::Match: one rule per scope the request carries, and the
// global scope) and asks, most restrictive first, the protocol that enforces each one, on the
// rule's own key ("scope_type:scope_value:endpoint" of the request). The first denial is the
// answer, and the rules after it are not asked (nothing is spent on them); when every rule admits,
// the answer is the most restrictive rule's, with the least `remaining` of all. A request no rule
// matches is admitted without a step (limit and remaining 0).
//
// The rules are read afresh at every decision, from wherever the caller keeps them (a RulesCache
// for real, a node's copy in the simulator), so a changed rule takes effect at the next request.
// A rule whose policy changed gets a new protocol instance; one whose state is in a store keeps
// counting on the same key (a rule made stricter sees what was admitted under the old one).
// Instances are kept until Restart, so that a decision in flight never loses its own.
//
// Not thread-safe: one per simulated node, or one per thread for real.
#ifndef RATELAB_IMPL_RULES_RULES_LIMITER_H_
#define RATELAB_IMPL_RULES_RULES_LIMITER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>

#include "impl/limiters/protocol.h"
#include "impl/rules/rules.h"

namespace ratelab {

class RulesLimiter final : public Protocol {
 public:
  // The rules in force now.
  using RulesSource = std::function<const RuleSet&()>;
  // The protocol that enforces one rule (its ToPolicy()).
  using ProtocolMaker = std::function<Result<std::unique_ptr<Protocol>>(const Rule& rule)>;

  RulesLimiter(RulesSource rules, ProtocolMaker make)
      : rules_(std::move(rules)), make_(std::move(make)) {}

  // A decision and the rule that gave it: the rule that denied, or the most restrictive of those
  // that admitted; none when no rule applies.
  struct Answer {
    Decision decision;
    std::optional<AnsweringRule> rule;
  };
  // InvalidArgument for a request whose scope type is not one of ScopeTypes() (or a request that
  // is not valid), and the maker's error for a rule it cannot enforce.
  Task<Result<Answer>> DecideByRules(Context& ctx, const Request& request);
  // The same read without spending (Protocol::Peek on each rule's protocol): what the request
  // would be answered now, `remaining` counted before it. Unimplemented when a rule's protocol
  // cannot read its count so.
  Task<Result<Answer>> PeekByRules(Context& ctx, const Request& request);
  // DecideByRules' decision.
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  // Forgets every instance (a new process makes them again).
  void Restart() override { instances_.clear(); }
  void SeedProcess(uint64_t seed) override;
  StateSize ProcessState() const override;

 private:
  // An instance per rule and policy: (rule_id, algorithm, limit, window).
  using InstanceKey = std::tuple<std::string, Algorithm, int64_t, int64_t>;
  // The same, to find one without copying the id.
  using InstanceKeyView = std::tuple<std::string_view, Algorithm, int64_t, int64_t>;
  // Orders keys and views alike (as views: tuples of unlike types do not compare everywhere).
  struct InstanceKeyLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) < View(b);
    }
    template <typename K>
    static InstanceKeyView View(const K& k) {
      return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)};
    }
  };
  Result<Protocol*> InstanceFor(const AppliedRule& applied);
  // DecideByRules, or PeekByRules when not `spend`.
  Task<Result<Answer>> ByRules(Context& ctx, const Request& request, bool spend);

  RulesSource rules_;
  ProtocolMaker make_;
  std::map<InstanceKey, std::unique_ptr<Protocol>, InstanceKeyLess> instances_;
  std::optional<uint64_t> process_seed_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_RULES_RULES_LIMITER_H_
