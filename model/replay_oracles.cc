// Oracles that replay a history's admissions into the reference model.
#include <algorithm>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "model/oracles.h"
#include "model/oracles_internal.h"
#include "model/reference_model.h"

namespace ratelab {

namespace {

// Calls `judge(event, model_decision)` for each denial, with the model holding exactly the
// admissions applied before it; returns the violations `judge` reports (first per key).
// `lenient` gives denials every benefit of the doubt (for "no false denials"): a request that got
// no answer but whose steps reached the store counts as admitted (it may have consumed; a crash
// took its answer), and a denial concurrent with an admission of its key is not judged.
template <typename Judge>
std::vector<Violation> ReplayDenials(const History& h, const Policy& policy, bool lenient,
                                     Judge judge) {
  std::vector<Violation> out;
  std::unique_ptr<ReferenceModel> model = MakeReferenceModel(policy);
  std::unordered_set<std::string_view> reported;
  std::vector<const HistoryEvent*> events;
  for (const HistoryEvent& e : h) {
    if (e.decision || (lenient && !e.steps.empty())) events.push_back(&e);
  }
  std::stable_sort(events.begin(), events.end(), internal::InvokeOrder);
  // Which of two concurrent requests the store took first is the store's order, not invoke's.
  std::unordered_map<std::string_view, std::vector<const HistoryEvent*>> admitted;
  // An unanswered request's effect on the store came no later than its last step.
  const auto end = [](const HistoryEvent* e) {
    return e->decision ? e->complete : e->steps.back().at;
  };
  Duration longest{};
  if (lenient) {
    for (const HistoryEvent* e : events) {
      if (e->denied()) continue;
      admitted[e->key].push_back(e);
      longest = std::max(longest, end(e) - e->invoke);
    }
  }
  const auto overlaps_an_admission = [&](const HistoryEvent& d) {
    auto it = admitted.find(d.key);
    if (it == admitted.end()) return false;
    const std::vector<const HistoryEvent*>& a = it->second;  // in invoke order
    auto hi = std::upper_bound(a.begin(), a.end(), d.complete,
                               [](Instant t, const HistoryEvent* f) { return t < f->invoke; });
    while (hi != a.begin()) {
      const HistoryEvent* f = *--hi;
      if (f->invoke < d.invoke - longest) break;
      if (end(f) >= d.invoke) return true;
    }
    return false;
  };
  for (const HistoryEvent* e : events) {
    if (!e->decision || e->decision->allowed) {
      model->Admit(e->key, e->invoke, e->cost);
      continue;
    }
    if (reported.contains(e->key)) continue;
    if (lenient && overlaps_an_admission(*e)) continue;
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
      h, policy, /*lenient=*/true,
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
      h, policy, /*lenient=*/false,
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
