#include "model/invariant.h"

#include "model/named.h"

namespace ratelab {

std::optional<Invariant> InvariantNamed(std::string_view name) { return Named(Invariants(), name); }

}  // namespace ratelab
