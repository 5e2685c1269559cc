#include "sim/simulation_executor.h"

namespace ratelab {

Duration SimulationExecutor::Leg(const Latency& l, Random& random) {
  Duration d = l.Draw(random) + extra_;
  // The chance is drawn whatever the bound, so that a bound of 0 leaves every other draw as it was.
  if (buggify_.enabled && random.Chance(buggify_.probability) && buggify_.max_delay.count() > 0) {
    // Uniform draws by multiply-shift: the same draw under a smaller bound is the same fraction
    // of it, so a smaller bound scales every delay down alike (the shrink looks for the least
    // transit a finding needs: search.h, Shrink).
    d += Duration(random.Uniform(0, buggify_.max_delay.count()));
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
  loop_.After(Leg(out_, observer_.random(step.request())), *this, uint64_t{slot} * 2);
}

void SimulationExecutor::OnEvent(uint64_t arg) {
  const auto slot = static_cast<uint32_t>(arg / 2);
  PendingStep* s = slots_[slot];
  if (arg % 2 == 0) {    // the step reaches the store
    if (s == nullptr) {  // lost in a crash before it got there
      Release(slot);
      return;
    }
    s->Apply();
    observer_.applied(s->request(), s->label(), loop_.now());
    loop_.After(Leg(back_, observer_.random(s->request())), *this, arg + 1);
    return;
  }
  // The answer reaches the client.
  Release(slot);
  if (s == nullptr) return;  // applied, but the node crashed before the answer came back
  const int64_t request = s->request();
  s->resume.resume();  // may finish the request and destroy *s
  observer_.resumed(request);
}

}  // namespace ratelab
