// A history: every request a run made, in the order it was issued, with what became of it.
// Oracles judge histories; they never see the limiter that produced one.
#ifndef RATELAB_MODEL_HISTORY_H_
#define RATELAB_MODEL_HISTORY_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/time.h"

namespace ratelab {

// One store operation a request performed, and when it took effect.
struct StepRecord {
  std::string label;  // "INCR rl:user:u1", "decide"
  Instant at{};
  bool operator==(const StepRecord&) const = default;
};

// A request's steps, in order. Most requests take one step, so the first is kept inline and only
// a request with more allocates: a simulation records hundreds of thousands of requests, and an
// allocation each was a fifth of its time.
class StepList {
 public:
  StepList() = default;

  void push_back(StepRecord step) {
    if (size_ == 0) {
      first_ = std::move(step);
    } else {
      if (size_ == 1) more_.push_back(std::move(first_));
      more_.push_back(std::move(step));
    }
    ++size_;
  }
  // The same, the step's label copied straight into its place (a simulation records a step for
  // every request).
  void emplace_back(const std::string& label, Instant at) {
    if (size_ == 0) {
      first_.label = label;
      first_.at = at;
      ++size_;
      return;
    }
    push_back({label, at});
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const StepRecord* begin() const { return data(); }
  const StepRecord* end() const { return data() + size_; }
  StepRecord* begin() { return data(); }
  StepRecord* end() { return data() + size_; }
  const StepRecord& operator[](size_t i) const { return data()[i]; }
  StepRecord& operator[](size_t i) { return data()[i]; }
  const StepRecord& back() const { return data()[size_ - 1]; }
  bool operator==(const StepList& o) const {
    return std::equal(begin(), end(), o.begin(), o.end());
  }

 private:
  const StepRecord* data() const { return size_ <= 1 ? &first_ : more_.data(); }
  StepRecord* data() { return size_ <= 1 ? &first_ : more_.data(); }

  StepRecord first_;              // the step, while there is at most one
  std::vector<StepRecord> more_;  // all of them, once there are two or more
  size_t size_ = 0;
};

struct HistoryEvent {
  int64_t id = 0;  // position in the run, unique
  std::string key;
  int node = 0;
  int64_t cost = 1;
  Instant invoke{};    // the client sent it (oracles judge this instant)
  Instant apply{};     // the decision took effect in the store
  Instant complete{};  // the client got the answer (unset when no answer came)
  Instant node_now{};  // what the node's clock read when the request arrived (skew shows here)
  std::optional<Decision> decision;  // empty: no answer ever came (lost in a crash)
  StepList steps;                    // in the order they took effect
  // A dense number for `key` given by whoever made the history (the simulator), so oracles can
  // group by key without hashing or sorting strings: events with the same key have the same id,
  // and ids increase with the keys (in std::string order). -1: not given (the oracles then hash
  // and sort the keys). Derived from `key`, so not part of HistoryHash.
  int32_t key_id = -1;
  // The limiter's own error, when it answered with one instead of a decision (a script that
  // failed, a reply of another shape than its interface says); empty otherwise. Not a store
  // fault: those are requests with no answer.
  std::string failure;

  bool admitted() const { return decision && decision->allowed; }
  bool failed() const { return !failure.empty(); }
  // No answer ever came (lost in a crash, or the store failed): neither a decision nor the
  // limiter's own error.
  bool unanswered() const { return !decision && !failed(); }
  // No answer came, but the request reached the store: it may have been admitted there (a crash
  // took its answer), consuming from its key or opening its window.
  bool maybe_admitted() const { return unanswered() && !steps.empty(); }
  bool denied() const { return decision && !decision->allowed; }
};

using History = std::vector<HistoryEvent>;

// A stable 64-bit hash (FNV-1a) of every field of every event, in order: two runs with the
// same hash made the same history. Independent of platform and of pointer values.
uint64_t HistoryHash(const History& h);
// The same of what was offered alone (each request's key, cost and sending instant, in order):
// two runs with the same hash were given the same traffic, whatever became of it.
uint64_t TrafficHash(const History& h);

// Whose clock a limiter decides on: the client's (the `now` it sends with each request: a
// decision as of `invoke`), or the store's, when the store runs the request (a script that reads
// TIME, or whose window is a key's time to live: a decision as of `apply`).
enum class DecisionClock { kClient, kStore };

// `h` with its times floored to multiples of `resolution`: the history as a protocol that sees
// time only that finely saw it (oracles judge such a protocol at its resolution).
History AtResolution(const History& h, Duration resolution);

// Whether some admission of `h` came with a wait before the client forwards it (Decision::wait).
bool DelaysAdmissions(const History& h);

// `h` as its limiter decided it, for the oracles (which judge `invoke`): at `resolution`, and on
// the store's clock each request that reached the store is judged at the instant it took effect
// there (its last step), the one it was decided at. An admission with a wait is judged when the
// client forwards it, its decision's instant plus the wait.
History AsDecided(const History& h, DecisionClock clock, Duration resolution);

}  // namespace ratelab

#endif  // RATELAB_MODEL_HISTORY_H_
