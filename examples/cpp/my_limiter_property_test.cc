// A property of the team's own, from ratelab's generators: the limiter decides every request as
// ratelab's model of a fixed window does.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <ratelab/rapidcheck.h>

#include <vector>

#include "my_limiter.h"

RC_GTEST_PROP(MyLimiter, DecidesAsTheModel, ()) {
  const ratelab::api::Options options = *ratelab::api::gen::Policy("fixed-window");
  const std::vector<ratelab::api::Request> traffic = *ratelab::api::gen::Traffic(options);
  MyLimiter limiter(options.limit, options.window);
  const std::vector<bool> expected = ratelab::api::ModelDecisions(options, traffic);
  for (size_t i = 0; i < traffic.size(); ++i) {
    RC_ASSERT(limiter.Allow(traffic[i].key, traffic[i].cost, traffic[i].at) == expected[i]);
  }
}
