#include "sim/simulation_executor.h"

namespace ratelab {

Duration SimulationExecutor::Leg(const Latency& l) {
  Duration d = l.Draw(random_) + extra_;
  if (buggify_.enabled && buggify_.max_delay.count() > 0 && random_.Chance(buggify_.probability)) {
    d += Duration(random_.Uniform(0, buggify_.max_delay.count()));
  }
  return d;
}

uint32_t SimulationExecutor::Hold(PendingStep& step) {
  if (free_.empty()) {
    slots_.push_back(&step);
    return static_cast<uint32_t>(slots_.size() - 1);
  }
  const uint32_t slot = free_.back();
  free_.pop_back();
  slots_[slot] = &step;
  return slot;
}

void SimulationExecutor::Submit(PendingStep& step) {
  const uint32_t slot = Hold(step);
  loop_.After(Leg(out_), [this, slot] {
    PendingStep* s = slots_[slot];
    if (s == nullptr) {  // lost in a crash before it reached the store
      Release(slot);
      return;
    }
    s->Apply();
    observer_.applied(s->request(), s->label(), loop_.now());
    loop_.After(Leg(back_), [this, slot] {
      PendingStep* s = slots_[slot];
      Release(slot);
      if (s == nullptr) return;  // applied, but the node crashed before the answer came back
      const int64_t request = s->request();
      s->resume.resume();  // may finish the request and destroy *s
      observer_.resumed(request);
    });
  });
}

}  // namespace ratelab
