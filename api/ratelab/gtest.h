// ratelab's C++ API in GoogleTest:
//
//   EXPECT_TRUE(ratelab::api::NothingFound(make, options));
//
// passes when the search finds nothing, and fails with what `ratelab check` prints: the verdict,
// the minimal witness and how to replay it.
#ifndef RATELAB_API_RATELAB_GTEST_H_
#define RATELAB_API_RATELAB_GTEST_H_

#include <gtest/gtest.h>

#include "ratelab/check.h"

namespace ratelab::api {

inline ::testing::AssertionResult NothingFound(const MakeLimiter& make, const Options& options) {
  const Verdict verdict = Check(make, options);
  return (verdict.NothingFound() ? ::testing::AssertionSuccess() : ::testing::AssertionFailure())
         << "\n"
         << verdict.text;
}

}  // namespace ratelab::api

#endif  // RATELAB_API_RATELAB_GTEST_H_
