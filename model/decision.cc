#include "model/decision.h"

namespace ratelab {

std::string ToString(const Decision& d) {
  std::string out = d.allowed ? "allowed" : "denied";
  out += " limit=" + std::to_string(d.limit) + " remaining=" + std::to_string(d.remaining) +
         " reset=" + FormatInstant(d.reset);
  if (!d.allowed) out += " retry_after=" + FormatDuration(d.retry_after);
  if (d.allowed && d.wait > Duration(0)) out += " wait=" + FormatDuration(d.wait);
  if (d.fallback) out += " (the limiter failed; the client's fallback)";
  return out;
}

}  // namespace ratelab
