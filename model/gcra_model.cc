#include "model/gcra_model.h"

#include <algorithm>

namespace ratelab {

Decision GcraModel::Peek(const Policy& p, Instant now, int64_t cost) const {
  const Int128 now_ns = ToUnixNanos(now);
  const Int128 base = seen ? std::max(tat, now_ns) : now_ns;
  const Int128 tolerance = Int128{p.limit} * p.window.count();
  const Int128 new_tat = base + Int128{cost} * p.window.count();
  Decision d;
  d.limit = p.limit;
  d.allowed = cost <= p.limit && new_tat - now_ns <= tolerance;
  const Int128 after = d.allowed ? new_tat : base;
  const Int128 room = tolerance - (after - now_ns);
  d.remaining = room <= 0 ? 0 : static_cast<int64_t>(room / p.window.count());
  d.reset = FromUnixNanos(static_cast<int64_t>(after));
  if (!d.allowed) {
    d.retry_after =
        cost > p.limit ? kNever : Duration(static_cast<int64_t>(new_tat - now_ns - tolerance));
  }
  return d;
}

void GcraModel::Admit(const Policy& p, Instant now, int64_t cost) {
  const Int128 now_ns = ToUnixNanos(now);
  tat = (seen ? std::max(tat, now_ns) : now_ns) + Int128{cost} * p.window.count();
  seen = true;
}

void GcraModel::Forget(const Policy&, Instant now) {
  if (seen && tat <= ToUnixNanos(now)) *this = GcraModel{};
}

}  // namespace ratelab
