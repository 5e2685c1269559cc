#include "sim/simulation_executor.h"

namespace ratelab {

Duration SimulationExecutor::Leg(const Latency& l) {
  Duration d = l.Draw(random_) + extra_;
  if (buggify_.enabled && buggify_.max_delay.count() > 0 && random_.Chance(buggify_.probability)) {
    d += Duration(random_.Uniform(0, buggify_.max_delay.count()));
  }
  return d;
}

void SimulationExecutor::Submit(PendingStep& step) {
  const uint64_t epoch = epoch_;
  PendingStep* s = &step;  // valid while epoch_ == epoch: a crash bumps the epoch first
  loop_.After(Leg(out_), [this, s, epoch] {
    if (epoch != epoch_) return;
    s->Apply();
    observer_.applied(s->request(), s->label(), loop_.now());
    loop_.After(Leg(back_), [this, s, epoch] {
      if (epoch != epoch_) return;
      const int64_t request = s->request();
      s->resume.resume();  // may finish the request and destroy *s
      observer_.resumed(request);
    });
  });
}

}  // namespace ratelab
