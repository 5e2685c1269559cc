#include "impl/rules/rules_store.h"

namespace ratelab {

Result<RuleSet> ReadOnlyRules::List() { return rules_; }

Status ReadOnlyRules::Refuse() const {
  return absl::FailedPreconditionError("the rules come from " + source_ +
                                       ", which the admin API only reads; keep them in "
                                       "PostgreSQL to change them here");
}

Status ReadOnlyRules::Put(const Rule&) { return Refuse(); }

Status ReadOnlyRules::Delete(std::string_view) { return Refuse(); }

}  // namespace ratelab
