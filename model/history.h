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

struct HistoryEvent {
  int64_t id = 0;  // position in the run, unique
  std::string key;
  int node = 0;
  int64_t cost = 1;
  Instant invoke{};    // the client sent it
  Instant apply{};     // the decision took effect in the store (oracles judge this instant)
  Instant complete{};  // the client got the answer
  std::optional<Decision> decision;  // empty: no answer ever came (lost in a crash)

  bool admitted() const { return decision && decision->allowed; }
  bool denied() const { return decision && !decision->allowed; }
};

using History = std::vector<HistoryEvent>;

}  // namespace ratelab

#endif  // RATELAB_MODEL_HISTORY_H_
