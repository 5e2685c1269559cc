#include "sim/sequential_run.h"

namespace ratelab {

Result<History> RunSequential(Protocol& protocol, const std::vector<Arrival>& arrivals) {
  InlineExecutor executor;
  Context ctx(executor);
  History history;
  history.reserve(arrivals.size());
  for (const Arrival& a : arrivals) {
    const Request request{"user", a.user, a.endpoint, a.cost, a.at};
    Result<Decision> decision = RunInline(protocol.Decide(ctx, request));
    if (!decision.ok()) return decision.status();
    HistoryEvent e;
    e.id = static_cast<int64_t>(history.size());
    e.key = LimiterKey(request);
    e.cost = a.cost;
    e.invoke = e.apply = e.complete = a.at;
    e.decision = *decision;
    history.push_back(std::move(e));
  }
  return history;
}

}  // namespace ratelab
