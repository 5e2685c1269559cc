// What the properties test: anything that decides requests sequentially. The in-process limiters
// and the reference models are subjects; so are the deliberately broken mutants (mutants.h) that
// show each property can fail.
#ifndef RATELAB_PROPERTY_TESTS_SUBJECTS_H_
#define RATELAB_PROPERTY_TESTS_SUBJECTS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "impl/core/clock.h"
#include "impl/core/step.h"
#include "impl/limiters/in_process_limiter.h"
#include "impl/limiters/protocol.h"
#include "impl/store/memory_kv.h"
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

// An in-process limiter that drops its idle keys at each request's `now` before deciding it
// (InProcessLimiter::DropIdle, as `serve` does every second): what it drops must change no
// decision.
class DroppingIdleSubject final : public Subject {
 public:
  explicit DroppingIdleSubject(const Policy& p) : limiter_(MakeInProcessLimiter(p)) {}
  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    limiter_->DropIdle(now);
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

// A protocol on its own MemoryKv, driven one request at a time (InlineExecutor), with the store's
// clock at each request's time.
//
// Kv protocols take time at microsecond (Lua scripts) or millisecond (TTLs) resolution, while the
// generated traffic uses nanosecond windows and times. So the subject runs the protocol on a
// timeline 1000 times slower: t becomes (t - base) * 1000 + kShift, where base and kShift are
// multiples of every generated window (so window edges stay edges), and maps each decision's
// reset and retry_after back. The comparison with the model stays exact.
class KvProtocolSubject final : public Subject {
 public:
  KvProtocolSubject(std::string_view protocol, const Policy& p) : kv_(clock_), scaled_(p) {
    scaled_.window = p.window * kScale;
    protocol_ = *MakeProtocol(protocol, scaled_, Stores{&kv_});
  }
  Decision Decide(std::string_view key, Instant now, int64_t cost) override {
    const int64_t t = ToUnixNanos(now);
    if (!base_) base_ = FloorDiv(t, kAlign) * kAlign;
    clock_.Set(FromUnixNanos((t - *base_) * kScale + kShift));
    const Request request{"user", std::string(key), "/api", cost, clock_.Now()};
    InlineExecutor executor;
    Context ctx(executor);
    Result<Decision> d = RunInline(protocol_->Decide(ctx, request));
    if (!d.ok()) return Decision{};  // never equal to a model decision with limit >= 1
    d->reset = FromUnixNanos((ToUnixNanos(d->reset) - kShift) / kScale + *base_);
    if (d->retry_after != kNever) d->retry_after /= kScale;
    return *d;
  }

 private:
  static constexpr int64_t kScale = 1000;
  static constexpr int64_t kAlign = 60'000'000'000;            // 1m: every window divides it
  static constexpr int64_t kShift = 28'334 * kAlign * kScale;  // about 2023-11
  ManualClock clock_{FromUnixNanos(0)};
  MemoryKv kv_;
  Policy scaled_;
  std::unique_ptr<Protocol> protocol_;
  std::optional<int64_t> base_;
};

inline SubjectFactory KvProtocol(std::string_view name) {
  return [name](const Policy& p) { return std::make_unique<KvProtocolSubject>(name, p); };
}

inline std::unique_ptr<Subject> MakeInProcessSubject(const Policy& p) {
  return std::make_unique<InProcessSubject>(p);
}
inline std::unique_ptr<Subject> MakeDroppingIdleSubject(const Policy& p) {
  return std::make_unique<DroppingIdleSubject>(p);
}
inline std::unique_ptr<Subject> MakeModelSubject(const Policy& p) {
  return std::make_unique<ModelSubject>(p);
}

}  // namespace ratelab::proptest

#endif  // RATELAB_PROPERTY_TESTS_SUBJECTS_H_
