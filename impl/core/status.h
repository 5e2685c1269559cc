// Errors are values: abseil's Status and StatusOr with their canonical codes (Unavailable,
// DeadlineExceeded, InvalidArgument, ...). A denial is not an error; it is a Decision.
#ifndef RATELAB_IMPL_CORE_STATUS_H_
#define RATELAB_IMPL_CORE_STATUS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ratelab {

using Status = absl::Status;
template <typename T>
using Result = absl::StatusOr<T>;

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_STATUS_H_
