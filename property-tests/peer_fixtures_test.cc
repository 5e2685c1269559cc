// Other projects' own unit-test expectations, replayed through ratelab's models and its
// in-process limiters: the requests each test makes (their instants and costs) and what it asserts
// of them (admitted or denied, the tokens left). Each fixture names its source and the convention
// it assumes; where another of ratelab's conventions answers differently, the fixture names that
// one too and the request at which it differs, so that the choice of convention is tested, not
// assumed. docs/design.md lists each convention with the libraries that use it.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "property-tests/subjects.h"
#include "testing/time.h"

namespace ratelab::proptest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Step {
  Duration at;                       // since the test's first request
  int64_t cost;                      // 0: a peek, as the peer's test asks for its counts
  bool admitted;                     // what the peer's test asserts (or its next assertion implies)
  std::optional<int64_t> remaining;  // where the peer's test asserts it
};

struct Fixture {
  const char* source;      // repository, file, test and commit
  const char* convention;  // what the test assumes, in ratelab's words
  Policy policy;
  std::vector<Step> steps;
  // ratelab's neighbouring convention, and the step at which it answers otherwise.
  Algorithm other;
  size_t differs_at;
};

const std::vector<Fixture>& Corpus() {
  static const std::vector<Fixture> kCorpus = {
      {"alisaifee/limits tests/test_strategy.py test_fixed_window "
       "(0172e2803bc0c04895dfc4fd5f7f2bf090b7d5a0)",
       "a window from the first hit, its key expiring at start + W: the next opens then "
       "(anchored-window-half-open)",
       Policy::Window(Algorithm::kAnchoredWindowHalfOpen, 10, seconds(2)),
       {{seconds(0), 1, true, 9},
        {seconds(0), 1, true, 8},
        {seconds(0), 1, true, 7},
        {seconds(0), 1, true, 6},
        {seconds(0), 1, true, 5},
        {seconds(0), 1, true, 4},
        {seconds(0), 1, true, 3},
        {seconds(0), 1, true, 2},
        {seconds(0), 1, true, 1},
        {seconds(0), 1, true, 0},
        {seconds(1), 1, false, 0},  // "assert not limiter.hit(limit)", stats 0 left
        {seconds(2), 0, true, 10},  // "get_window_stats(limit)[1] == 10"
        {seconds(2), 1, true, 9}},  // "assert limiter.hit(limit)"
       // The closed window still holds start + W: its stats say 0 left and the hit is denied.
       Algorithm::kAnchoredWindow,
       11},
      {"alisaifee/limits tests/test_strategy.py test_moving_window_in_memory "
       "(0172e2803bc0c04895dfc4fd5f7f2bf090b7d5a0)",
       "a log whose window includes its far edge: an entry counts until W after it, inclusive "
       "(sliding-log-closed)",
       Policy::Window(Algorithm::kSlidingLogClosed, 10, seconds(60)),
       {{seconds(0), 1, true, 9},
        {seconds(0), 1, true, 8},
        {seconds(10), 1, true, 7},
        {seconds(10), 1, true, 6},
        {seconds(20), 1, true, 5},
        {seconds(20), 1, true, 4},
        {seconds(30), 1, true, 3},
        {seconds(30), 1, true, 2},
        {seconds(40), 1, true, 1},
        {seconds(40), 1, true, 0},
        {seconds(50), 1, false, 0},  // "assert not limiter.hit(limit)"
        {seconds(70), 0, true, 2},   // "get_window_stats(limit)[1] == 2": the hits at 10s count
        {seconds(101), 0, true, 10}},
       // The half-open log has let the hits at 10s go by 70s: 4 left, not 2.
       Algorithm::kSlidingLog,
       11},
      {"symfony/rate-limiter Tests/Policy/SlidingWindowLimiterTest.php testConsume "
       "(6540413badbf393692e8d419eb3abccca34b6e25)",
       "a sliding counter whose windows follow on from the first hit, its weighted count of the "
       "previous window rounded down (sliding-counter-anchored-floored)",
       Policy::Window(Algorithm::kSlidingCounterAnchoredFloored, 10, seconds(12)),
       {{seconds(0), 8, true, std::nullopt},
        {seconds(15), 1, true, std::nullopt},  // 25% into the next window: floor(8 * 0.75) = 6
        {seconds(15), 5, false, 3},            // 6 + 1 + 5 > 10; "getRemainingTokens() == 3"
        {seconds(28), 10, true, 0}},           // floor(1 * 8/12) = 0, so 10 fit
       // Exact, the previous window's 1 still weighs 8/12 at 28s: 10 more do not fit.
       Algorithm::kSlidingCounterAnchored,
       3},
      {"symfony/rate-limiter Tests/Policy/SlidingWindowLimiterTest.php testPeekConsume "
       "(6540413badbf393692e8d419eb3abccca34b6e25)",
       "consume(0) is a peek: admitted, nothing counted (sliding-counter-anchored-floored)",
       Policy::Window(Algorithm::kSlidingCounterAnchoredFloored, 10, seconds(12)),
       {{seconds(0), 9, true, 1},
        {seconds(0), 0, true, 1},
        {seconds(0), 0, true, 1},
        {seconds(0), 1, true, 0},
        {seconds(0), 0, true, 0}},
       // In one window nothing is weighed, so the exact counter agrees throughout.
       Algorithm::kSlidingCounterAnchored,
       SIZE_MAX},
      {"golang/time rate/rate_test.go TestLimiterBurst3 "
       "(0e9765cccd655efb9fdab0fc6cafe025144d46de)",
       "a bucket refilled in fractions of a token, a cost above what is left denied, a cost above "
       "the burst never admitted, a cost of 0 always (token-bucket)",
       Policy::Bucket(Algorithm::kTokenBucket, 3, milliseconds(100)),
       {{milliseconds(0), 2, true, std::nullopt},
        {milliseconds(0), 2, false, std::nullopt},
        {milliseconds(0), 1, true, std::nullopt},
        {milliseconds(0), 1, false, std::nullopt},
        {milliseconds(100), 4, false, std::nullopt},  // more than the burst: never
        {milliseconds(200), 1, true, std::nullopt},
        {milliseconds(300), 1, true, std::nullopt},
        {milliseconds(400), 1, true, std::nullopt},
        {milliseconds(400), 1, true, std::nullopt},
        {milliseconds(400), 1, false, std::nullopt},
        {milliseconds(400), 1, false, std::nullopt},
        {milliseconds(900), 3, true, std::nullopt},
        {milliseconds(900), 0, true, std::nullopt}},
       // On credit (Guava's convention), the second 2 is admitted while one token is left.
       Algorithm::kTokenBucketCredit,
       1},
      {"golang/time rate/rate_test.go TestLimiterBurst1 "
       "(0e9765cccd655efb9fdab0fc6cafe025144d46de)",
       "a bucket of 1 (token-bucket)",
       Policy::Bucket(Algorithm::kTokenBucket, 1, milliseconds(100)),
       {{milliseconds(0), 1, true, std::nullopt},
        {milliseconds(0), 1, false, std::nullopt},
        {milliseconds(0), 1, false, std::nullopt},
        {milliseconds(100), 1, true, std::nullopt},
        {milliseconds(100), 1, false, std::nullopt},
        {milliseconds(100), 1, false, std::nullopt},
        {milliseconds(200), 2, false, std::nullopt},  // "burst size is 1, so n=2 always fails"
        {milliseconds(200), 1, true, std::nullopt},
        {milliseconds(200), 1, false, std::nullopt}},
       // GCRA keeps the same promise and answers alike: no neighbour differs here.
       Algorithm::kGcra,
       SIZE_MAX},
  };
  return kCorpus;
}

// What `make`'s subject of `policy` answers to each step, as "admitted, 3 left" per step.
std::vector<std::string> Replay(const SubjectFactory& make, const Policy& policy,
                                const std::vector<Step>& steps) {
  std::unique_ptr<Subject> subject = make(policy);
  std::vector<std::string> out;
  for (const Step& s : steps) {
    const Decision d = subject->Decide("peer", kT0 + s.at, s.cost);
    out.push_back(std::string(d.allowed ? "admitted" : "denied") + ", " +
                  std::to_string(d.remaining) + " left");
  }
  return out;
}

std::string Expected(const Step& s, const std::string& got) {
  const std::string decision = s.admitted ? "admitted" : "denied";
  if (s.remaining) return decision + ", " + std::to_string(*s.remaining) + " left";
  // Where the peer asserts no count, only the decision is held to it.
  return got.starts_with(decision + ",") ? got : decision;
}

TEST(PeerFixtures, EachPeersTestPassesOnTheModelAndTheLimiterOfItsConvention) {
  for (const Fixture& f : Corpus()) {
    for (const auto& [name, make] :
         {std::pair<const char*, SubjectFactory>{"model", MakeModelSubject},
          {"in-process limiter", MakeInProcessSubject}}) {
      const std::vector<std::string> got = Replay(make, f.policy, f.steps);
      for (size_t i = 0; i < f.steps.size(); ++i) {
        EXPECT_EQ(got[i], Expected(f.steps[i], got[i]))
            << f.source << ", step " << i << ", on the " << name << " of " << f.convention;
      }
    }
  }
}

TEST(PeerFixtures, TheNeighbouringConventionAnswersOtherwiseWhereTheFixtureSays) {
  for (const Fixture& f : Corpus()) {
    Policy other = f.policy;
    other.algorithm = f.other;
    const std::vector<std::string> got = Replay(MakeModelSubject, other, f.steps);
    for (size_t i = 0; i < f.steps.size(); ++i) {
      if (i == f.differs_at) {
        EXPECT_NE(got[i], Expected(f.steps[i], got[i]))
            << f.source << ": " << AlgorithmName(f.other) << " should differ at step " << i;
        break;  // past the first difference, the two states differ too
      }
      EXPECT_EQ(got[i], Expected(f.steps[i], got[i]))
          << f.source << ", step " << i << ", on " << AlgorithmName(f.other);
    }
  }
}

}  // namespace
}  // namespace ratelab::proptest
