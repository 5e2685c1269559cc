// FaultyKv: a Kv that can be cut off. While down (an outage, or a restarting server), every
// command fails with Unavailable and reaches nothing; otherwise it forwards to the real store.
// Overlapping faults nest: the store is back when the last one ends. Single-threaded.
#ifndef RATELAB_SIM_FAULTY_KV_H_
#define RATELAB_SIM_FAULTY_KV_H_

#include "impl/store/kv.h"

namespace ratelab {

class FaultyKv final : public KvWrapper {
 public:
  using KvWrapper::KvWrapper;

  Result<KvReply> Execute(std::span<const std::string> argv) override {
    if (down_ > 0) return absl::UnavailableError("store unreachable");
    return KvWrapper::Execute(argv);
  }
  void Down() { ++down_; }
  void Up() { --down_; }
  bool down() const { return down_ > 0; }

 private:
  int down_ = 0;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_FAULTY_KV_H_
