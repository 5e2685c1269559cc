// The C++ API as a user calls it: through its public headers alone, linked to the shared library.
#include "ratelab/check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ratelab/gtest.h"
#include "ratelab/rapidcheck.h"

namespace {

using namespace std::chrono_literals;
using ratelab::api::Instant;

// A fixed window as a user writes one: a count per key in the window since the epoch that `now`
// falls in; `spare` more than the limit admitted when the flaw is in.
class FixedWindow final : public ratelab::api::Limiter {
 public:
  FixedWindow(int64_t limit, std::chrono::nanoseconds window, int64_t spare = 0)
      : limit_(limit), window_(window), spare_(spare) {}

  bool Admit(std::string_view key, int64_t cost, Instant now) override {
    auto& [index, count] = counts_[std::string(key)];
    const int64_t at = now.time_since_epoch() / window_;
    if (at != index) index = at, count = 0;
    if (count + cost > limit_ + spare_) return false;
    count += cost;
    return true;
  }

 private:
  int64_t limit_;
  std::chrono::nanoseconds window_;
  int64_t spare_;
  std::map<std::string, std::pair<int64_t, int64_t>> counts_;
};

ratelab::api::Options FixedWindowOptions() {
  ratelab::api::Options o;
  o.model = "fixed-window";
  o.limit = 3;
  o.window = 10s;
  o.seeds = 50;
  return o;
}

TEST(CppApi, ACorrectLimiterPassesAndTheTextSaysWhatWasSearched) {
  const ratelab::api::Options o = FixedWindowOptions();
  const auto make = [] { return std::make_unique<FixedWindow>(3, 10s); };
  EXPECT_TRUE(ratelab::api::NothingFound(make, o));
  const ratelab::api::Verdict v = ratelab::api::Check(make, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kNothingFound);
  EXPECT_EQ(v.seed, 0u);
  EXPECT_NE(v.text.find("nothing found in 50 seed(s)"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("fixed-window 3 per 10s"), std::string::npos) << v.text;
}

TEST(CppApi, AFlawIsFoundWithItsWitnessAndTheSeedReplaysIt) {
  ratelab::api::Options o = FixedWindowOptions();
  const auto make = [] { return std::make_unique<FixedWindow>(3, 10s, /*spare=*/1); };
  const ratelab::api::Verdict v = ratelab::api::Check(make, o);
  ASSERT_EQ(v.outcome, ratelab::api::Outcome::kViolation) << v.text;
  EXPECT_NE(v.text.find("my limiter"), std::string::npos) << v.text;
  EXPECT_NE(v.text.find("4 admitted"), std::string::npos) << v.text;
  EXPECT_NE(
      v.text.find("options.first_seed = " + std::to_string(v.seed) + " and options.seeds = 1"),
      std::string::npos)
      << v.text;
  EXPECT_FALSE(ratelab::api::NothingFound(make, o));
  // The seed it names replays it, to the byte.
  o.first_seed = v.seed;
  o.seeds = 1;
  const ratelab::api::Verdict again = ratelab::api::Check(make, o);
  EXPECT_EQ(again.outcome, ratelab::api::Outcome::kViolation);
  EXPECT_EQ(again.text, v.text);
}

TEST(CppApi, ACrashForgetsAnInMemoryLimitersCounts) {
  ratelab::api::Options o = FixedWindowOptions();
  o.faults = "crash";
  const ratelab::api::Verdict v =
      ratelab::api::Check([] { return std::make_unique<FixedWindow>(3, 10s); }, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kViolation) << v.text;
  EXPECT_NE(v.text.find("crash"), std::string::npos) << v.text;
}

TEST(CppApi, ALimiterThatThrowsFailedWithItsMessage) {
  struct Throws final : ratelab::api::Limiter {
    bool Admit(std::string_view, int64_t, Instant) override {
      throw std::runtime_error("the counter overflowed");
    }
  };
  const ratelab::api::Verdict v =
      ratelab::api::Check([] { return std::make_unique<Throws>(); }, FixedWindowOptions());
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kLimiterFailed) << v.text;
  EXPECT_NE(v.text.find("the limiter threw: the counter overflowed"), std::string::npos) << v.text;
}

TEST(CppApi, BadOptionsSayWhichAndWhy) {
  const auto make = [] { return std::make_unique<FixedWindow>(3, 10s); };
  ratelab::api::Options o = FixedWindowOptions();
  o.model = "fixed-windw";
  ratelab::api::Verdict v = ratelab::api::Check(make, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kBadInput);
  EXPECT_NE(v.text.find("model: unknown algorithm 'fixed-windw'"), std::string::npos) << v.text;
  o = FixedWindowOptions();
  o.limit = 0;
  v = ratelab::api::Check(make, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kBadInput);
  EXPECT_NE(v.text.find("limit"), std::string::npos) << v.text;
  o = FixedWindowOptions();
  o.checks = "promise,nonsense";
  v = ratelab::api::Check(make, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kBadInput);
  EXPECT_NE(v.text.find("nonsense"), std::string::npos) << v.text;
  o = FixedWindowOptions();
  o.model = "token-bucket";
  o.rate = 1e-12;  // a token in about 31,700 years: its interval would not fit
  v = ratelab::api::Check(make, o);
  EXPECT_EQ(v.outcome, ratelab::api::Outcome::kBadInput);
  EXPECT_NE(v.text.find("rate: "), std::string::npos) << v.text;
  o = FixedWindowOptions();
  o.seeds = 0;
  EXPECT_EQ(ratelab::api::Check(make, o).outcome, ratelab::api::Outcome::kBadInput);
  EXPECT_EQ(ratelab::api::Check(nullptr, FixedWindowOptions()).outcome,
            ratelab::api::Outcome::kBadInput);
}

TEST(CppApi, TheSameOptionsGiveTheSameText) {
  const auto make = [] { return std::make_unique<FixedWindow>(3, 10s, 1); };
  EXPECT_EQ(ratelab::api::Check(make, FixedWindowOptions()).text,
            ratelab::api::Check(make, FixedWindowOptions()).text);
}

TEST(CppApi, ModelDecisionsAreTheAlgorithmStatedExactly) {
  ratelab::api::Options o = FixedWindowOptions();
  const Instant t0{std::chrono::sys_days(std::chrono::year(2026) / 1 / 1)};
  const std::vector<ratelab::api::Request> requests = {
      {"a", 1, t0}, {"a", 2, t0 + 1s}, {"a", 1, t0 + 2s}, {"b", 1, t0 + 3s}, {"a", 1, t0 + 10s}};
  EXPECT_EQ(ratelab::api::ModelDecisions(o, requests),
            (std::vector<bool>{true, true, false, true, true}));
  o.model = "token-bucket";
  o.burst = 2;
  o.rate = 1;
  EXPECT_EQ(ratelab::api::ModelDecisions(
                o, {{"a", 1, t0}, {"a", 1, t0}, {"a", 1, t0}, {"a", 1, t0 + 1s}}),
            (std::vector<bool>{true, true, false, true}));
  o.model = "no-such";
  EXPECT_THROW(ratelab::api::ModelDecisions(o, requests), std::invalid_argument);
}

// A property of the user's own, from the generators: the limiter decides every request as the
// model does. It holds for the correct limiter, and RapidCheck finds the flawed one out.
bool DecidesAsTheModel(int64_t spare) {
  return rc::check("decides as the model", [spare] {
    const ratelab::api::Options options = *ratelab::api::gen::Policy("fixed-window");
    const std::vector<ratelab::api::Request> traffic = *ratelab::api::gen::Traffic(options);
    RC_ASSERT(traffic.size() <= 100u);
    FixedWindow limiter(options.limit, options.window, spare);
    const std::vector<bool> expected = ratelab::api::ModelDecisions(options, traffic);
    for (size_t i = 0; i < traffic.size(); ++i) {
      RC_ASSERT(limiter.Admit(traffic[i].key, traffic[i].cost, traffic[i].at) == expected[i]);
    }
  });
}

TEST(CppApi, TheGeneratorsDrawPropertiesThatHoldAndFindAFlaw) {
  EXPECT_TRUE(DecidesAsTheModel(0));
  EXPECT_FALSE(DecidesAsTheModel(1));
}

}  // namespace
