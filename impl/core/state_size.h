// How much state a limiter holds: the keys it has state for and their payload bytes (keys and
// values as stored, without the container's own overhead).
#ifndef RATELAB_IMPL_CORE_STATE_SIZE_H_
#define RATELAB_IMPL_CORE_STATE_SIZE_H_

#include <cstdint>

namespace ratelab {

struct StateSize {
  int64_t keys = 0;
  int64_t bytes = 0;

  StateSize& operator+=(const StateSize& o) {
    keys += o.keys;
    bytes += o.bytes;
    return *this;
  }
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_STATE_SIZE_H_
