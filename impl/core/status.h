// Errors are values: abseil's Status and StatusOr with their canonical codes (Unavailable,
// DeadlineExceeded, InvalidArgument, ...). A denial is not an error; it is a Decision.
#ifndef RATELAB_IMPL_CORE_STATUS_H_
#define RATELAB_IMPL_CORE_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace ratelab {

using Status = absl::Status;
template <typename T>
using Result = absl::StatusOr<T>;

// Whether `s` says the store could not be reached or did not answer in time: the client got no
// answer, as when a request is lost. Any other error from a limiter is the limiter's own failure
// (a script that failed, a reply of another shape than its interface says).
inline bool IsStoreFailure(const Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s);
}

// A limiter that failed where no run could report it as one of its findings (a limiter process
// that died or answered out of protocol when greeted): the commands exit 3 for it, as for a
// failure a run found.
inline Status LimiterFailedError(const std::string& message) { return absl::AbortedError(message); }
inline bool IsLimiterFailed(const Status& s) { return absl::IsAborted(s); }

}  // namespace ratelab

#endif  // RATELAB_IMPL_CORE_STATUS_H_
