// The checks table: every check named once and found by its name; judges read only what the run
// hands them; survives-restart runs the limiter again only when something restarted.
#include "judge/checks.h"

#include <gtest/gtest.h>

#include <set>

namespace ratelab {
namespace {

using std::chrono::seconds;

const Instant kNoon = FromUnixNanos(0) + std::chrono::hours(12);

HistoryEvent Admitted(int64_t id, Duration at, const std::string& step) {
  HistoryEvent e;
  e.id = id;
  e.key = "user:u1:/api";
  e.invoke = e.apply = e.complete = kNoon + at;
  e.decision = Decision{true, 0, 0, {}, {}};
  e.steps.push_back({step, kNoon + at});
  return e;
}

TEST(Checks, EveryCheckHasOneNameThatFindsIt) {
  std::set<std::string_view> names;
  for (const CheckInfo& c : Checks()) {
    EXPECT_EQ(&CheckOf(c.id), &c);
    Result<CheckId> found = ParseCheck(CheckName(c.id));
    ASSERT_TRUE(found.ok()) << CheckName(c.id);
    EXPECT_EQ(*found, c.id);
  }
  // Every id, a scenario's check or not, has a name of its own and says what it judges.
  for (const CheckIdInfo& c : CheckIds()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_EQ(CheckNamed(c.name), c.id);
  }
  EXPECT_EQ(Checks().size(), 9u);
  // Ids a scenario cannot ask for: the ratio every run reports, linearizability (a live run's),
  // a worst-case measure, what only HTTP shows.
  for (const std::string_view other :
       {"boundary-burst", "linearizable", "false-denial-streak", "server-errors"}) {
    EXPECT_FALSE(ParseCheck(other).ok()) << other;
  }
  const Result<CheckId> unknown = ParseCheck("vibes");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown check 'vibes' (expected one of promise, "),
            std::string::npos);
}

TEST(Checks, OnlyThePromiseCanBeJudgedWithoutTheStoresOrder) {
  for (const CheckInfo& c : Checks()) {
    EXPECT_EQ(c.judge_over_intervals != nullptr, c.id == CheckId::kPromise) << CheckName(c.id);
  }
}

// A judged run of `h` under fixed window 1 per 10s.
struct Fixture {
  History history;
  Policy policy = Policy::Window(Algorithm::kFixedWindow, 1, seconds(10));
  AnyWindowReport any;
  std::vector<NeverFreed> never_expire;
  std::vector<FaultWindow> restarts;
  int reruns = 0;
  History calm;
  std::function<Result<History>()> without_restarts = [this]() -> Result<History> {
    ++reruns;
    return calm;
  };
  Judged Run() {
    any = CheckAnyWindowCap(history, 1, policy.window);
    return {history, policy, 1, policy.window, any, never_expire, restarts, without_restarts};
  }
};

TEST(Checks, KeyExpiryNamesTheKeyAndTheRequestsThatWroteIt) {
  Fixture f;
  f.history = {Admitted(0, seconds(1), "INCR rl:a"), Admitted(1, seconds(12), "INCR rl:b")};
  f.never_expire = {{"store key rl:a", "no TTL", {"rl:a"}}};
  Result<std::vector<Violation>> v = CheckOf(CheckId::kKeyExpiry).judge(f.Run());
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].summary, "store key rl:a has no expiry (no TTL): nothing will ever free it");
  ASSERT_EQ((*v)[0].witness.size(), 1u);
  EXPECT_EQ((*v)[0].witness[0].id, 0);
}

TEST(Checks, SurvivesRestartBlamesOnlyWhatARestartReset) {
  Fixture f;
  // Two admissions in one window, a restart between them.
  f.history = {Admitted(0, seconds(1), "decide"), Admitted(1, seconds(3), "decide")};
  Result<std::vector<Violation>> v = CheckOf(CheckId::kSurvivesRestart).judge(f.Run());
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty()) << "nothing restarted";
  EXPECT_EQ(f.reruns, 0) << "and the run was not made again";

  f.restarts = {
      {"node 0 crashed at 12:00:02.000 (down 1s)", kNoon + seconds(2), kNoon + seconds(3)}};
  f.calm = {Admitted(0, seconds(1), "decide")};  // without the crash, the second was denied
  v = CheckOf(CheckId::kSurvivesRestart).judge(f.Run());
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->size(), 1u);
  EXPECT_EQ((*v)[0].invariant, CheckId::kSurvivesRestart);
  EXPECT_NE((*v)[0].summary.find("; across the restart: node 0 crashed"), std::string::npos);
  EXPECT_EQ(f.reruns, 1);

  f.calm = f.history;  // broken anyway: not the restart's doing
  v = CheckOf(CheckId::kSurvivesRestart).judge(f.Run());
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->empty());
}

// A key whose promise is already broken: its search is kept short, long enough to find a plain
// witness (the model test shows one that runs out counted apart, never "unknown").
TEST(Checks, AKeyAlreadyBrokenStillGetsItsWitnessFromAShortSearch) {
  const Policy policy = Policy::Window(Algorithm::kFixedWindow, 1, std::chrono::minutes(1));
  History h;
  for (int64_t i = 0; i < 3; ++i) {
    h.push_back(Admitted(i, seconds(i), "decide"));
    h.back().complete = h.back().invoke + std::chrono::milliseconds(1);
  }
  const std::vector<Violation> broken = JudgePromiseOverIntervals(h, h, policy, Duration(1), false);
  ASSERT_FALSE(broken.empty());
  const LinearizabilityJudgement found =
      JudgeLinearizability(h, policy, Duration(1), Duration(1), DecisionClock::kStore, broken);
  EXPECT_EQ(found.verdict, LinearVerdict::kNotLinearizable);
  EXPECT_TRUE(found.violation.has_value()) << "a short search finds this witness";
  EXPECT_EQ(found.broken_keys, 0);
}

// The one tie rule in the linearizability search too (stress, probe), as check gives it: a
// library reading whole milliseconds whose anchored window ends before its last millisecond (a
// record expired when `expiresAt - now > 0` fails) opens its next window on the tick the model's
// closed window still holds. Judged at 1 ms, an admission on that tick is explained by the window
// a tick shorter; one a whole 5 ms inside the window is not.
// Two calls of one key, at `first` and `second`, each answered 100us later; the second
// admitted or denied.
History TwoCalls(Duration first, Duration second, bool second_admitted) {
  History h = {Admitted(0, first, "decide"), Admitted(1, second, "decide")};
  h[1].decision->allowed = second_admitted;
  for (HistoryEvent& e : h) e.complete = e.invoke + std::chrono::microseconds(100);
  return h;
}

TEST(Checks, ALinearizabilityVerdictHoldsOnlyIfItHoldsAtTheTieOfTheResolution) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  const Policy policy = Policy::Window(Algorithm::kAnchoredWindow, 1, milliseconds(10));
  const auto history = [](Duration second) { return TwoCalls(microseconds(300), second, true); };
  // On the tick of the window's end (10 ms after the tick it opened on).
  const History tie = history(microseconds(10'200));
  EXPECT_EQ(
      JudgeLinearizability(tie, policy, milliseconds(1), milliseconds(1), DecisionClock::kClient)
          .verdict,
      LinearVerdict::kLinearizable);
  EXPECT_EQ(
      JudgeLinearizability(tie, policy, Duration(1), Duration(1), DecisionClock::kClient).verdict,
      LinearVerdict::kNotLinearizable)
      << "at a nanosecond there is no tie";
  EXPECT_EQ(JudgeLinearizability(tie, policy, milliseconds(1), Duration(1), DecisionClock::kClient)
                .verdict,
            LinearVerdict::kNotLinearizable)
      << "nor where the window's edges are whole ticks of the clock that decides";
  const LinearizabilityJudgement inside = JudgeLinearizability(
      history(milliseconds(5)), policy, milliseconds(1), milliseconds(1), DecisionClock::kClient);
  EXPECT_EQ(inside.verdict, LinearVerdict::kNotLinearizable);
  EXPECT_TRUE(inside.violation.has_value());
  EXPECT_EQ(TiePolicy(policy, milliseconds(1))->window, milliseconds(9));
  EXPECT_EQ(TiePolicy(Policy::Window(Algorithm::kSlidingLog, 1, milliseconds(10)), milliseconds(1))
                ->window,
            milliseconds(11));
  EXPECT_FALSE(
      TiePolicy(Policy::Window(Algorithm::kFixedWindow, 1, milliseconds(10)), milliseconds(1)));
}

// A bucket of one token, one per 10ms, on a millisecond clock: the token taken at 0 is due again
// on the tick of 10ms, where a limiter that counts it in floating point may find it a hair short.
// A denial there is its tie, forgiven as check forgives it; one a tick later is not.
TEST(Checks, ABucketsDenialOnTheTickItsTokenCameDueIsItsTie) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  const Policy policy = Policy::Bucket(Algorithm::kTokenBucket, 1, milliseconds(10));
  const auto history = [](Duration denied_at) { return TwoCalls(Duration(0), denied_at, false); };
  const auto verdict = [&](const History& h, Duration resolution) {
    return JudgeLinearizability(h, policy, resolution, resolution, DecisionClock::kClient).verdict;
  };
  EXPECT_EQ(verdict(history(milliseconds(10)), milliseconds(1)), LinearVerdict::kLinearizable);
  EXPECT_EQ(verdict(history(microseconds(10'500)), milliseconds(1)), LinearVerdict::kLinearizable)
      << "the same tick";
  EXPECT_EQ(verdict(history(milliseconds(11)), milliseconds(1)), LinearVerdict::kNotLinearizable)
      << "a whole tick after the token came due";
  EXPECT_EQ(verdict(history(milliseconds(10)), Duration(1)), LinearVerdict::kNotLinearizable)
      << "at a nanosecond there is no tie";
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// A denial after an admission exactly a window before it, in a log that counts an entry for W:
// held to the half-open sliding log (an entry W old no longer counts), it is false; judged at a
// millisecond, it is forgiven where the floor made the tie, and kept where the two were exactly a
// window apart.
TEST(Checks, AFalseDenialAtATieTheResolutionMadeIsForgivenAndAnExactOneIsNot) {
  using std::chrono::milliseconds;
  const auto denied = [](int64_t id, Duration at) {
    HistoryEvent e = Admitted(id, at, "EVAL");
    e.decision->allowed = false;
    return e;
  };
  const auto judge = [&](Duration first, Duration second) {
    Fixture f;
    f.policy = Policy::Window(Algorithm::kSlidingLog, 1, seconds(10));
    const History exact = {Admitted(0, first, "EVAL"), denied(1, second)};
    f.history = AsDecided(exact, DecisionClock::kClient, milliseconds(1));
    Judged j = f.Run();
    j.resolution = milliseconds(1);
    j.tie = milliseconds(1);
    j.exact = [&] { return exact; };
    Result<std::vector<Violation>> v = CheckOf(CheckId::kFalseDenials).judge(j);
    EXPECT_TRUE(v.ok());
    return v.ok() ? v->size() : size_t{99};
  };
  // 10.0002 s apart: the floor made the tie (1.0003 and 11.0005 are 1.000 and 11.000).
  EXPECT_EQ(judge(milliseconds(1000) + std::chrono::microseconds(300),
                  milliseconds(11000) + std::chrono::microseconds(500)),
            0u);
  // Exactly 10 s apart, each between milliseconds: the tie is real.
  EXPECT_EQ(judge(milliseconds(1000) + std::chrono::microseconds(300),
                  milliseconds(11000) + std::chrono::microseconds(300)),
            1u);
  // A clear false denial is one whatever the resolution.
  EXPECT_EQ(judge(seconds(1), seconds(12)), 1u);
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// Two of two in a log of 10ms on the client's clock: the request sent at 0 was taken after the one
// sent at 5us, so the log (whose time never goes back) admitted it at 5us. At 10.002ms, 2ms into
// the window after the one that held the request sent at 0, both still count: the denial there
// is the model's, not a false one, though the request's own instant has left the window. Had the
// request sent at 0 been answered before the other was sent, it could not have been taken after
// it, and a denial then, when only one still counts, is false.
TEST(Checks, OnTheClientsClockAnAdmissionTakenLateCountsAtTheInstantItWasTakenAt) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  const Policy policy = Policy::Window(Algorithm::kSlidingLog, 2, milliseconds(10));
  const auto history = [](Duration first_answered) {
    History h = {Admitted(0, Duration(0), "decide"), Admitted(1, microseconds(5), "decide"),
                 Admitted(2, microseconds(10'002), "decide")};
    h[0].complete = h[0].invoke + first_answered;
    h[1].complete = h[1].invoke + microseconds(2);
    h[2].decision->allowed = false;
    h[2].complete = h[2].invoke + microseconds(1);
    return h;
  };
  const auto false_denials = [&](const History& h) {
    return JudgeFalseDenialsOverIntervals(h, h, policy, Duration(1), Duration(1),
                                          DecisionClock::kClient)
        .size();
  };
  EXPECT_EQ(false_denials(history(microseconds(10))), 0u) << "taken after the one sent at 5us";
  EXPECT_EQ(JudgeLinearizability(history(microseconds(10)), policy, Duration(1), Duration(1),
                                 DecisionClock::kClient)
                .verdict,
            LinearVerdict::kLinearizable);
  EXPECT_EQ(false_denials(history(microseconds(3))), 1u) << "answered before the other was sent";
}

// Two admissions from a bucket of one token in 1.1ms, on a millisecond clock: a broken promise,
// whose key's search is kept short. The denials between them, a tick earlier (a bucket's tie), are
// searched again; where that search runs out it found no order, and the key is not forgiven.
// (Stress of a racy bucket on the in-memory store, 580 000 calls on one key, had been called
// linearizable so.)
TEST(Checks, AKeyAlreadyBrokenIsForgivenItsTieOnlyWhereAnOrderAtTheTieIsFound) {
  using std::chrono::microseconds;
  using std::chrono::milliseconds;
  const Policy policy = Policy::Bucket(Algorithm::kTokenBucket, 1, milliseconds(10));
  const auto event = [](int64_t id, int64_t from_us, int64_t to_us, bool allowed) {
    HistoryEvent e = Admitted(id, microseconds(from_us), "decide");
    e.complete = e.invoke + microseconds(to_us - from_us);
    e.decision->allowed = allowed;
    return e;
  };
  const History h = {event(0, 0, 100, true), event(1, 300, 2500, false), event(2, 600, 700, false),
                     event(3, 1000, 1100, true), event(4, 1200, 1300, false)};
  const Violation broken{CheckId::kBucketConformance, h[0].key, "", {}};
  // A budget that the first search keeps to and the search at the tie passes, and ones above and
  // below it.
  for (const int64_t budget : {int64_t{5}, int64_t{24}, int64_t{200'000}}) {
    const LinearizabilityJudgement j = JudgeLinearizability(
        h, policy, milliseconds(1), milliseconds(1), DecisionClock::kClient, {broken}, budget);
    EXPECT_EQ(j.verdict, LinearVerdict::kNotLinearizable) << "budget " << budget;
  }
}

}  // namespace
}  // namespace ratelab
