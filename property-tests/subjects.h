// What the properties test: anything that decides requests sequentially. The in-process limiters
// and the reference models are subjects; so are the deliberately broken mutants (mutants.h) that
// show each property can fail.
#ifndef RATELAB_PROPERTY_TESTS_SUBJECTS_H_
#define RATELAB_PROPERTY_TESTS_SUBJECTS_H_

#include <functional>
#include <memory>
#include <string_view>

#include "impl/limiters/in_process_limiter.h"
#include "model/reference_model.h"

namespace ratelab::proptest {

class Subject {
 public:
  virtual ~Subject() = default;
  virtual Decision Decide(std::string_view key, Instant now, int64_t cost) = 0;
};

using SubjectFactory = std::function<std::unique_ptr<Subject>(const Policy&)>;

class InProcessSubject final : public Subject {
 public:
  explicit InProcessSubject(const Policy& p) : limiter_(MakeInProcessLimiter(p)) {}
  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    return limiter_->Decide(key, now, cost);
  }

 private:
  std::unique_ptr<InProcessLimiter> limiter_;
};

class ModelSubject final : public Subject {
 public:
  explicit ModelSubject(const Policy& p) : model_(MakeReferenceModel(p)) {}
  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    return model_->Decide(key, now, cost);
  }

 private:
  std::unique_ptr<ReferenceModel> model_;
};

inline std::unique_ptr<Subject> MakeInProcessSubject(const Policy& p) {
  return std::make_unique<InProcessSubject>(p);
}
inline std::unique_ptr<Subject> MakeModelSubject(const Policy& p) {
  return std::make_unique<ModelSubject>(p);
}

}  // namespace ratelab::proptest

#endif  // RATELAB_PROPERTY_TESTS_SUBJECTS_H_
