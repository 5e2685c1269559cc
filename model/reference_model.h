// Sequential reference models: the simplest obviously-correct statement of each algorithm.
//
// A model is the independent witness the harness compares implementations against, so it
// favours clarity over speed (std::map, exact integer arithmetic, no concurrency) and depends on
// nothing in impl/. Not thread-safe.
//
// A denial changes nothing: only admissions move a key's state (contrast the common Redis recipes'
// sliding log and counter, which count denied requests too).
//
// Time: calls for one key are expected in non-decreasing `now`. A request that arrives with an
// earlier `now` than the key's latest admission is evaluated at the key's latest instant (window
// algorithms: in its latest window); GCRA needs no such rule, an earlier `now` only makes it
// stricter. Every model states `retry_after` relative to the request's own `now`.
#ifndef RATELAB_MODEL_REFERENCE_MODEL_H_
#define RATELAB_MODEL_REFERENCE_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "model/decision.h"
#include "model/key_model.h"
#include "model/policy.h"
#include "model/time.h"

namespace ratelab {

class ReferenceModel {
 public:
  virtual ~ReferenceModel() = default;

  // What the algorithm answers to `cost` units for `key` at `now`; changes nothing.
  // Requires cost >= 1.
  virtual Decision Peek(std::string_view key, Instant now, int64_t cost) const = 0;
  // Records that `cost` units were admitted for `key` at `now`, whether or not Peek would have
  // allowed it, so a history from a limiter that over-admits can be replayed into the model.
  virtual void Admit(std::string_view key, Instant now, int64_t cost) = 0;
  // Forgets every key (an in-process limiter's restart).
  virtual void Clear() = 0;
  virtual std::unique_ptr<ReferenceModel> Clone() const = 0;

  // The sequential limiter: Peek, then Admit when allowed.
  Decision Decide(std::string_view key, Instant now, int64_t cost);

  const Policy& policy() const { return policy_; }

 protected:
  explicit ReferenceModel(const Policy& policy) : policy_(policy) {}

 private:
  Policy policy_;
};

// The model for `policy`. Requires !policy.Problem().
std::unique_ptr<ReferenceModel> MakeReferenceModel(const Policy& policy);

namespace internal {

// A model made of one independent key model (key_model.h) per key. A key whose aligned windows
// start at an offset (Policy::offset) is its State on a clock that much behind, its reset that much
// ahead.
template <KeyModel State>
class PerKeyModel final : public ReferenceModel {
 public:
  explicit PerKeyModel(const Policy& policy) : ReferenceModel(policy) {}

  Decision Peek(std::string_view key, Instant now, int64_t cost) const override {
    auto it = states_.find(key);
    return it == states_.end() ? PeekAt(Keyed{State(), policy().OffsetOf(key)}, now, cost)
                               : PeekAt(it->second, now, cost);
  }
  void Admit(std::string_view key, Instant now, int64_t cost) override {
    auto it = states_.find(key);
    if (it == states_.end()) {
      it = states_.emplace(std::string(key), Keyed{State(), policy().OffsetOf(key)}).first;
    }
    it->second.state.Admit(policy(), now - it->second.offset, cost);
  }
  void Clear() override { states_.clear(); }
  std::unique_ptr<ReferenceModel> Clone() const override {
    return std::make_unique<PerKeyModel>(*this);
  }

 private:
  struct Keyed {
    State state;
    Duration offset{};  // Policy::OffsetOf the key, found once
  };
  Decision PeekAt(const Keyed& k, Instant now, int64_t cost) const {
    Decision d = k.state.Peek(policy(), now - k.offset, cost);
    d.reset += k.offset;
    return d;
  }

  std::map<std::string, Keyed, std::less<>> states_;
};

}  // namespace internal
}  // namespace ratelab

#endif  // RATELAB_MODEL_REFERENCE_MODEL_H_
