#include "model/violation.h"

namespace ratelab {

std::string DescribeEvent(const HistoryEvent& e) {
  std::string out = FormatInstant(e.invoke) + "  #" + std::to_string(e.id) + " key=" + e.key +
                    " node=" + std::to_string(e.node) + " cost=" + std::to_string(e.cost) + " ";
  if (!e.decision) return out + "no answer";
  if (e.decision->allowed) return out + "admitted";
  return out + "denied, retry after " + FormatDuration(e.decision->retry_after);
}

std::string Violation::ToString() const {
  std::string out = "[" + std::string(InvariantName(invariant)) + "] " + summary + "\n";
  for (const HistoryEvent& e : witness) out += "  " + DescribeEvent(e) + "\n";
  return out;
}

}  // namespace ratelab
