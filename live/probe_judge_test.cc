// JudgeProbe on made-up exchanges: what a probe concludes from answers alone, with no server.
#include "live/probe_judge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "live/probe_test_util.h"

namespace ratelab {
namespace {

using testing_probe::FindingChecks;

const Instant kStart = FromUnixMillis(1'700'000'000'000);  // a minute's first instant

Duration Ms(int64_t ms) { return std::chrono::milliseconds(ms); }

// A plan held to a fixed window of 2 a minute per user.
ProbePlan FixedWindowOfTwo() {
  ProbePlan plan;
  plan.url = "http://127.0.0.1:1/";
  plan.policy = Policy::Window(Algorithm::kFixedWindow, 2, std::chrono::minutes(1));
  return plan;
}

// Exchange number `n` for `user`, sent `sent_ms` after kStart and answered 2 ms later with
// `status` and `headers`.
HttpExchange Answer(int64_t n, const std::string& user, int64_t sent_ms, int status,
                    std::vector<HttpHeader> headers = {}) {
  HttpExchange e;
  e.n = n;
  e.label = user;
  e.sent = kStart + Ms(sent_ms);
  e.answered = e.sent + Ms(2);
  e.status = status;
  e.headers = std::move(headers);
  return e;
}

ProbeResult Judge(const ProbePlan& plan, std::vector<HttpExchange> exchanges) {
  Result<ProbeResult> r = JudgeProbe(plan, std::move(exchanges));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ProbeResult{};
}

// Headers an honest fixed window of 2 a minute sends, `remaining` left, reset at the minute's end.
std::vector<HttpHeader> Honest(int64_t remaining) {
  return {{"X-RateLimit-Limit", "2"},
          {"X-RateLimit-Remaining", std::to_string(remaining)},
          {"X-RateLimit-Reset", "1700000060"}};
}

TEST(JudgeProbe, AnHonestWindowIsCleanAndItsAnswersCounted) {
  std::vector<HttpHeader> denial = Honest(0);
  denial.push_back({"Retry-After", "60"});
  const ProbeResult r = Judge(
      FixedWindowOfTwo(), {Answer(0, "u", 0, 200, Honest(1)), Answer(1, "u", 10, 200, Honest(0)),
                           Answer(2, "u", 20, 429, denial)});
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.admitted, 2);
  EXPECT_EQ(r.denied, 1);
  EXPECT_EQ(r.history.size(), 3u);
  EXPECT_EQ(r.latency_p50, Ms(2));
  EXPECT_EQ(r.linearizability.verdict, LinearVerdict::kLinearizable);
}

// A bucket of one, a token every 100ms, on a server that decides on whole milliseconds of its
// own clock, 0.9ms ahead of the probe's: sent at 0.05ms and 99.15ms of the probe's clock, the
// two requests are at its 0ms and 100ms, a whole interval apart, and both admitted. Floored to
// the probe's milliseconds they would be 99ms apart ("broken") while linearizability, which
// lets the server's clock be up to a millisecond behind, finds them in order: one model of the
// server's clock for both.
TEST(JudgeProbe, AServerOnWholeMillisecondsOfItsOwnClockIsNotBrokenAndLinearizable) {
  ProbePlan plan = FixedWindowOfTwo();
  plan.policy = Policy::Bucket(Algorithm::kTokenBucket, 1, Ms(100));
  const auto at = [](int64_t n, Duration sent) {
    HttpExchange e = Answer(n, "u", 0, 200);
    e.sent = kStart + sent;
    e.answered = e.sent + std::chrono::microseconds(50);
    return e;
  };
  const ProbeResult r =
      Judge(plan, {at(0, std::chrono::microseconds(50)), at(1, std::chrono::microseconds(99'150))});
  EXPECT_TRUE(r.violations.empty()) << r.violations.front().ToString();
  EXPECT_EQ(r.linearizability.verdict, LinearVerdict::kLinearizable);
  // A millisecond more than any clock allows is still broken, and not linearizable.
  const ProbeResult early =
      Judge(plan, {at(0, std::chrono::microseconds(50)), at(1, std::chrono::microseconds(98'000))});
  ASSERT_FALSE(early.violations.empty());
  EXPECT_NE(early.violations.front().summary.find("(its clock to the nanosecond or to the 1ms"),
            std::string::npos)
      << early.violations.front().summary;
  EXPECT_EQ(early.linearizability.verdict, LinearVerdict::kNotLinearizable);
}

TEST(JudgeProbe, ThreeAdmissionsInAWindowOfTwoBreakThePromise) {
  const ProbeResult r = Judge(FixedWindowOfTwo(), {Answer(0, "u", 0, 200), Answer(1, "u", 10, 200),
                                                   Answer(2, "u", 20, 200)});
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().invariant, r.promise);
  EXPECT_EQ(r.violations.front().witness.size(), 3u);
  EXPECT_FALSE(r.clean());
  // Another user's admission is no part of it.
  const ProbeResult two_users =
      Judge(FixedWindowOfTwo(),
            {Answer(0, "u", 0, 200), Answer(1, "u", 10, 200), Answer(2, "v", 20, 200)});
  EXPECT_TRUE(two_users.violations.empty()) << two_users.violations.front().ToString();
}

TEST(JudgeProbe, EachDishonestHeaderIsItsOwnFinding) {
  ProbePlan plan = FixedWindowOfTwo();
  plan.required = {CheckId::kRetryAfterMissing};
  const ProbeResult r =
      Judge(plan, {Answer(0, "u", 0, 200, {{"X-RateLimit-Remaining", "many"}}),
                   Answer(1, "v", 10, 200, {{"X-RateLimit-Remaining", "5"}}),
                   Answer(2, "w", 20, 429, {}), Answer(3, "x", 30, 429, {{"Retry-After", "60000"}}),
                   Answer(4, "y", 40, 200, {{"X-RateLimit-Reset", "1600000000"}}),
                   Answer(5, "z", 50, 200, {{"X-RateLimit-Reset", "3600"}})});
  // w and x are denied their first request, which the model had room for.
  EXPECT_EQ(FindingChecks(r),
            (std::vector<std::string>{"false-denials", "header-syntax", "remaining-above-model",
                                      "reset-beyond-model", "reset-in-the-past",
                                      "retry-after-missing", "retry-after-too-long"}));
  for (const ProbeFinding& f : r.findings) {
    if (f.check == CheckId::kFalseDenials) {
      EXPECT_EQ(f.exchanges, (std::vector<int64_t>{2, 3}));
      EXPECT_TRUE(f.summary.starts_with("2 user(s) with a denial no order explains: #2 (w) "))
          << f.summary;
      continue;
    }
    EXPECT_EQ(f.exchanges.size(), 1u) << CheckName(f.check);
    EXPECT_NE(f.summary.find(" of 6 answers: #"), std::string::npos) << f.summary;
  }
}

// A server held to a claim one looser than its own (a sliding log of 5 a second that denies the
// fifth): the denial no order explains is a finding whatever the search of linearizability
// decides, and its sixth, after five admitted, is none.
TEST(JudgeProbe, ADenialTheModelHadRoomForWhereverItFellIsAFalseDenial) {
  ProbePlan plan = FixedWindowOfTwo();
  plan.policy = Policy::Window(Algorithm::kSlidingLog, 5, std::chrono::seconds(1));
  std::vector<HttpExchange> four;
  for (int64_t i = 0; i < 4; ++i) four.push_back(Answer(i, "u", 10 * i, 200));
  std::vector<HttpExchange> tight = four;
  tight.push_back(Answer(4, "u", 40, 429, {{"Retry-After", "1"}}));
  const ProbeResult r = Judge(plan, tight);
  EXPECT_TRUE(r.violations.empty());
  EXPECT_EQ(FindingChecks(r), (std::vector<std::string>{"false-denials"}));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().exchanges, (std::vector<int64_t>{4}));
  EXPECT_NE(r.findings.front().summary.find("sliding-log 5 per 1s had room wherever"),
            std::string::npos)
      << r.findings.front().summary;
  EXPECT_NE(r.findings.front().summary.find("(its clock to the nanosecond or to the 1ms, unknown)"),
            std::string::npos)
      << r.findings.front().summary;
  EXPECT_FALSE(r.clean());
  // Its fifth admitted, the sixth denied: explained.
  std::vector<HttpExchange> honest = four;
  honest.push_back(Answer(4, "u", 40, 200));
  honest.push_back(Answer(5, "u", 50, 429, {{"Retry-After", "1"}}));
  EXPECT_TRUE(FindingChecks(Judge(plan, honest)).empty());
  // Sent before the fifth admission, and answered while it was in flight: the server may have
  // taken the fifth first, which explains it.
  std::vector<HttpExchange> racing = four;
  racing.push_back(Answer(4, "u", 39, 429, {{"Retry-After", "1"}}));
  racing.push_back(Answer(5, "u", 40, 200));
  EXPECT_TRUE(FindingChecks(Judge(plan, racing)).empty());
}

// RFC 6585: a 429 MAY say when to retry. Without --require retry-after-missing, a denial without
// one is a note, which fails nothing.
TEST(JudgeProbe, ADenialWithoutRetryAfterIsANoteUnlessRequired) {
  const std::vector<HttpExchange> answers = {Answer(0, "u", 0, 200), Answer(1, "u", 10, 200),
                                             Answer(2, "u", 20, 429)};
  ProbePlan plan = FixedWindowOfTwo();
  ProbeResult r = Judge(plan, answers);
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].check, CheckId::kRetryAfterMissing);
  EXPECT_EQ(r.notes[0].summary, "1 of 3 answers: #2 a 429 without Retry-After");
  plan.required = {*ParseRequiredCheck("retry-after-missing")};
  r = Judge(plan, answers);
  EXPECT_EQ(FindingChecks(r), (std::vector<std::string>{"retry-after-missing"}));
  EXPECT_TRUE(r.notes.empty());
  EXPECT_EQ(ParseRequiredCheck("remaining").status().message(),
            "unknown optional check 'remaining' (expected retry-after-missing)");
  // The check the worst-case search or a scenario asks for by "retry-after" is another one.
  EXPECT_FALSE(ParseRequiredCheck("retry-after").ok());
}

// A Retry-After given as an HTTP-date is a wait like seconds: until the date, on the server's
// clock (its Date) or else the probe's; dates are whole seconds, so a second more is allowed.
TEST(JudgeProbe, ARetryAfterDateIsJudgedLikeSeconds) {
  // Answered at kStart + 22 ms; kStart is Tue, 14 Nov 2023 22:13:20 GMT.
  const auto denial = [](int64_t n, const std::vector<HttpHeader>& headers) {
    return Answer(n, "u" + std::to_string(n), 20, 429, headers);
  };
  ProbePlan plan = FixedWindowOfTwo();  // never waits more than 61 s
  ProbeResult r = Judge(plan, {denial(0, {{"Retry-After", "Tue, 14 Nov 2023 22:14:20 GMT"}}),
                               denial(1, {{"Retry-After", "Tue, 14 Nov 2023 22:14:24 GMT"}}),
                               denial(2, {{"Retry-After", "Tue, 14 Nov 2023 22:15:20 GMT"},
                                          {"Date", "Tue, 14 Nov 2023 22:14:20 GMT"}}),
                               denial(3, {{"Retry-After", "Tue, 14 Nov 2023 22:16:20 GMT"},
                                          {"Date", "Tue, 14 Nov 2023 22:14:20 GMT"}}),
                               denial(4, {{"Retry-After", "soon"}}),
                               denial(5, {{"Retry-After", "99999999999999999"}})});
  EXPECT_EQ(r.history[0].decision->retry_after, std::chrono::seconds(60));
  EXPECT_EQ(r.history[2].decision->retry_after, std::chrono::seconds(60));
  // Each user's only request denied is a false denial too.
  EXPECT_EQ(FindingChecks(r),
            (std::vector<std::string>{"false-denials", "header-syntax", "retry-after-too-long"}));
  for (const ProbeFinding& f : r.findings) {
    if (f.check == CheckId::kRetryAfterTooLong) {
      EXPECT_EQ(f.exchanges, (std::vector<int64_t>{1, 3, 5})) << f.summary;
      EXPECT_EQ(f.summary,
                "3 of 6 answers: #1 Retry-After: Tue, 14 Nov 2023 22:14:24 GMT (63s away), but "
                "the model never waits more than 61 s (milliseconds given for seconds?)");
    }
  }
}

TEST(JudgeProbe, ARemainingThatRisesBeforeItsResetIsFound) {
  const ProbeResult r = Judge(
      FixedWindowOfTwo(), {Answer(0, "u", 0, 200, Honest(0)), Answer(1, "u", 10, 200, Honest(1))});
  EXPECT_EQ(FindingChecks(r), (std::vector<std::string>{"remaining-rose"}));
  EXPECT_EQ(r.findings.front().exchanges, (std::vector<int64_t>{1}));
}

TEST(JudgeProbe, ServerErrorsUnansweredAndOtherStatusesAreNeverAdmissions) {
  HttpExchange lost = Answer(2, "u", 20, 0);
  lost.error = "timed out";
  const ProbeResult r = Judge(FixedWindowOfTwo(), {Answer(0, "u", 0, 502), Answer(1, "u", 10, 404),
                                                   lost, Answer(3, "u", 30, 200)});
  EXPECT_EQ(r.admitted, 1);
  EXPECT_EQ(r.denied, 0);
  EXPECT_EQ(r.server_errors, 1);
  EXPECT_EQ(r.other, 1);
  EXPECT_EQ(r.unanswered, 1);
  EXPECT_EQ(FindingChecks(r), (std::vector<std::string>{"server-errors"}));
  // Only an admission or a denial is a decision: the rest may or may not have counted.
  EXPECT_FALSE(r.history[0].decision.has_value());
  EXPECT_TRUE(r.history[3].decision.has_value());
}

TEST(JudgeProbe, ADenialTheBodyStatesIsADenial) {
  ProbePlan plan = FixedWindowOfTwo();
  plan.denied_bodies = {"slow down"};
  HttpExchange e = Answer(0, "u", 0, 200, {{"Retry-After", "5"}});
  e.body = R"({"error": "slow down"})";
  const ProbeResult r = Judge(plan, {e});
  EXPECT_EQ(r.admitted, 0);
  EXPECT_EQ(r.denied, 1);
}

TEST(JudgeProbe, ThePolicyIsLearntFromTheFirstAnswerThatStatesIt) {
  ProbePlan plan = FixedWindowOfTwo();
  plan.policy_from_headers = true;
  ProbeResult r = Judge(plan, {Answer(0, "u", 0, 200, {}),
                               Answer(1, "u", 10, 200, {{"RateLimit-Policy", "10;w=30"}})});
  EXPECT_EQ(r.policy, Policy::Window(Algorithm::kFixedWindow, 10, std::chrono::seconds(30)));
  // A limit without its window is held to the window given (--window), and refused without one:
  // a minute is no more likely than a second.
  const std::vector<HttpExchange> limit_only = {
      Answer(0, "u", 0, 200, {{"X-RateLimit-Limit", "7"}})};
  const Result<ProbeResult> no_window = JudgeProbe(plan, limit_only);
  ASSERT_FALSE(no_window.ok());
  EXPECT_EQ(no_window.status().message(),
            "--from-headers: #0 states the limit (X-RateLimit-Limit: 7) but not the window it "
            "counts over (RateLimit-Policy's w); give --window");
  plan.window_given = true;
  r = Judge(plan, limit_only);
  EXPECT_EQ(r.policy, Policy::Window(Algorithm::kFixedWindow, 7, std::chrono::minutes(1)));
  const Result<ProbeResult> none = JudgeProbe(plan, {Answer(0, "u", 0, 200)});
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(none.status()));
  EXPECT_EQ(none.status().message(), kNoPolicyInHeaders);
}

}  // namespace
}  // namespace ratelab
