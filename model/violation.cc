#include "model/violation.h"

namespace ratelab {

void SetGrid(Violation& v, const Policy& policy) {
  if (!policy.Aligned()) return;
  v.grid = Violation::Grid{FromUnixNanos(0) + policy.OffsetOf(v.key), policy.window};
}

void UncutWindow(Violation& v, Duration resolution) {
  if (v.window && v.window->closed && resolution > Duration(1)) {
    v.window = Violation::Window{v.window->from, v.window->to + resolution, false, v.window->span};
  }
}

std::string DescribeOutcome(const HistoryEvent& e) {
  if (e.failed()) return "failed: " + e.failure;
  if (!e.decision) return "no answer";
  if (e.decision->fallback) {
    return std::string(e.decision->allowed ? "admitted" : "denied") +
           " by the client: the limiter failed";
  }
  if (e.decision->allowed) {
    return e.decision->wait > Duration(0)
               ? "admitted, to go after " + FormatDuration(e.decision->wait)
               : "admitted";
  }
  // A limiter that names no wait (it says only "no") leaves it zero.
  if (e.decision->retry_after == Duration(0)) return "denied";
  return "denied, retry after " + FormatDuration(e.decision->retry_after);
}

std::string DescribeEvent(const HistoryEvent& e) {
  return FormatInstant(e.invoke) + "  #" + std::to_string(e.id) + " key=" + e.key +
         " node=" + std::to_string(e.node) + " cost=" + std::to_string(e.cost) + " " +
         DescribeOutcome(e);
}

std::string Violation::ToString() const {
  std::string out = "[" + std::string(CheckName(invariant)) + "] " + summary + "\n";
  for (const HistoryEvent& e : witness) out += "  " + DescribeEvent(e) + "\n";
  return out;
}

}  // namespace ratelab
