// The team's test: its limiter, checked by ratelab as `ratelab check` would check it.
#include "my_limiter.h"

#include <gtest/gtest.h>
#include <ratelab/gtest.h>

#include <memory>

namespace {

// ratelab's view of the limiter: one instance per limiter process it simulates.
class Checked final : public ratelab::api::Limiter {
 public:
  Checked() : limiter_(5, std::chrono::seconds(10)) {}
  bool Admit(std::string_view key, int64_t cost, ratelab::api::Instant now) override {
    return limiter_.Allow(key, cost,
                          std::chrono::time_point_cast<std::chrono::system_clock::duration>(now));
  }

 private:
  MyLimiter limiter_;
};

TEST(MyLimiter, KeepsItsFixedWindow) {
  ratelab::api::Options options;
  options.model = "fixed-window";
  options.limit = 5;
  options.window = std::chrono::seconds(10);
  options.name = "MyLimiter";
  EXPECT_TRUE(ratelab::api::NothingFound([] { return std::make_unique<Checked>(); }, options));
}

}  // namespace
