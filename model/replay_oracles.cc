// Oracles that replay a history's admissions into the reference model.
#include <memory>
#include <optional>
#include <unordered_set>

#include "model/oracles.h"
#include "model/oracles_internal.h"
#include "model/reference_model.h"

namespace ratelab {

namespace {

// Calls `judge(event, model_decision)` for each denial, with the model holding exactly the
// admissions applied before it; returns the violations `judge` reports (first per key).
template <typename Judge>
std::vector<Violation> ReplayDenials(const History& h, const Policy& policy, Judge judge) {
  std::vector<Violation> out;
  std::unique_ptr<ReferenceModel> model = MakeReferenceModel(policy);
  std::unordered_set<std::string_view> reported;
  for (const HistoryEvent* e : internal::AnsweredInInvokeOrder(h)) {
    if (e->decision->allowed) {
      model->Admit(e->key, e->invoke, e->cost);
      continue;
    }
    if (reported.contains(e->key)) continue;
    const Decision expected = model->Peek(e->key, e->invoke, e->cost);
    if (std::optional<std::string> why = judge(*e, expected)) {
      out.push_back({"", e->key, *why, {*e}});
      reported.insert(e->key);
    }
  }
  return out;
}

}  // namespace

std::vector<Violation> CheckFalseDenials(const History& h, const Policy& policy) {
  std::vector<Violation> out = ReplayDenials(
      h, policy,
      [&](const HistoryEvent& e, const Decision& expected) -> std::optional<std::string> {
        if (!expected.allowed) return std::nullopt;
        return "denied at " + FormatInstant(e.invoke) + " although " + policy.ToString() +
               " had room (" + std::to_string(expected.remaining + e.cost) +
               " left before this request of cost " + std::to_string(e.cost) + ")";
      });
  for (Violation& v : out) v.invariant = "false-denials";
  return out;
}

std::vector<Violation> CheckRetryAfter(const History& h, const Policy& policy) {
  std::vector<Violation> out = ReplayDenials(
      h, policy,
      [&](const HistoryEvent& e, const Decision& expected) -> std::optional<std::string> {
        if (expected.allowed || expected.retry_after == e.decision->retry_after) {
          return std::nullopt;
        }
        return "denied at " + FormatInstant(e.invoke) + " with retry after " +
               FormatDuration(e.decision->retry_after) + "; the exact wait under " +
               policy.ToString() + " is " + FormatDuration(expected.retry_after);
      });
  for (Violation& v : out) v.invariant = "retry-after";
  return out;
}

}  // namespace ratelab
