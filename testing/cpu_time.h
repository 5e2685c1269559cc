// The CPU time the calling thread has used. Header-only; for tests.
#ifndef RATELAB_TESTING_CPU_TIME_H_
#define RATELAB_TESTING_CPU_TIME_H_

#include <time.h>

#include <chrono>

namespace ratelab {

// What a test bounds when it asks that work done on its own thread ends soon: the thread's own
// CPU time does not grow while the tests beside it hold the machine's cores, as the wall clock
// does (a bound on the wall clock failed under the sanitizers with four tests on two cores).
inline std::chrono::nanoseconds ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

}  // namespace ratelab

#endif  // RATELAB_TESTING_CPU_TIME_H_
