#include "model/reference_model.h"

#include "model/key_models.h"

namespace ratelab {

Decision ReferenceModel::Decide(std::string_view key, Instant now, int64_t cost) {
  Decision d = Peek(key, now, cost);
  if (d.allowed) Admit(key, now, cost);
  return d;
}

std::unique_ptr<ReferenceModel> MakeReferenceModel(const Policy& policy) {
  return WithKeyModel(policy.algorithm, [&]<KeyModel M>() -> std::unique_ptr<ReferenceModel> {
    return std::make_unique<internal::PerKeyModel<M>>(policy);
  });
}

}  // namespace ratelab
