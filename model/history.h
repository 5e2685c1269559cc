// A history: every request a run made, in the order it was issued, with what became of it.
// Oracles judge histories; they never see the limiter that produced one.
#ifndef RATELAB_MODEL_HISTORY_H_
#define RATELAB_MODEL_HISTORY_H_

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
  std::vector<StepRecord> steps;     // in the order they took effect
  // A dense number for `key` given by whoever made the history (the simulator), so oracles can
  // group by key without hashing strings: events with the same key have the same id and events
  // with different keys different ids. -1: not given (the oracles then hash the keys). Derived
  // from `key`, so not part of HistoryHash.
  int32_t key_id = -1;

  bool admitted() const { return decision && decision->allowed; }
  bool denied() const { return decision && !decision->allowed; }
};

using History = std::vector<HistoryEvent>;

// A stable 64-bit hash (FNV-1a) of every field of every event, in order: two runs with the
// same hash made the same history. Independent of platform and of pointer values.
uint64_t HistoryHash(const History& h);

// `h` with its times floored to multiples of `resolution`: the history as a protocol that sees
// time only that finely saw it (oracles judge such a protocol at its resolution).
History AtResolution(const History& h, Duration resolution);

}  // namespace ratelab

#endif  // RATELAB_MODEL_HISTORY_H_
