// A probe's plan, its schedule and what it reads of the window's edge: no server needed.
#include "live/probe_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "live/probe_findings.h"
#include "live/probe_schedule.h"

namespace ratelab {
namespace {

// A plan for `url`, held to a fixed window of 2 a minute per user; the rest as a user leaves it.
ProbePlan At(const std::string& url) {
  ProbePlan plan;
  plan.url = url;
  plan.policy = Policy::Window(Algorithm::kFixedWindow, 2, std::chrono::minutes(1));
  return plan;
}

TEST(Probe, PlansWithoutCapsOrWithBadPartsAreRefused) {
  const auto problem = [](auto change) {
    ProbePlan plan = At("http://127.0.0.1:1/x");
    change(plan);
    const Status s = CheckProbePlan(plan);
    return s.ok() ? std::string("ok") : std::string(s.message());
  };
  EXPECT_EQ(problem([](ProbePlan&) {}), "ok");
  EXPECT_EQ(problem([](ProbePlan& p) { p.max_requests = 0; }),
            "--max-requests: 0 is not 1 to 1000000");
  EXPECT_EQ(problem([](ProbePlan& p) { p.max_per_second = 0; }),
            "--max-rps: 0 is not above 0 and at most 10000");
  EXPECT_EQ(problem([](ProbePlan& p) { p.url = "https://example.com/"; }),
            "'https://example.com/' is HTTPS, which probe does not speak: give an http:// URL");
  EXPECT_EQ(problem([](ProbePlan& p) { p.url = "http://:80/"; }), "'http://:80/' has no host");
  EXPECT_EQ(problem([](ProbePlan& p) { p.url = "http://h:99999/"; }),
            "'http://h:99999/' has a port that is not 1 to 65535");
  EXPECT_EQ(problem([](ProbePlan& p) { p.method = "GE T"; }),
            "--method: 'GE T' is not an HTTP method");
  EXPECT_EQ(problem([](ProbePlan& p) {
              p.headers = {{"X-A", "1\r\nX-B: 2"}};
            }),
            "--header: the value of X-A has a line break");
  EXPECT_EQ(problem([](ProbePlan& p) { p.user_prefix = "a\r\nX-Evil: 1"; }),
            "--user-prefix: 'a\r\nX-Evil: 1' may hold only letters, digits, '-', '_' and '.'");
  EXPECT_EQ(problem([](ProbePlan& p) {
              p.traffic = TrafficKind::kBoundaryAttack;
              p.policy = Policy::Bucket(Algorithm::kTokenBucket, 5, std::chrono::seconds(1));
            }),
            "--traffic boundary-attack aims at a window's edge: give a window model, not a bucket");
  EXPECT_EQ(problem([](ProbePlan& p) { p.denied_statuses = {42}; }),
            "--denied-if: 42 is not an HTTP status (100 to 599)");
}

TEST(Probe, RequestsFillInTheUserAndTheirNumber) {
  ProbePlan plan = At("http://127.0.0.1:1/u/{user}?n={n}");
  plan.headers = {{"X-User", "{user}"}};
  plan.body = R"({"id": "{user}", "n": {n}})";
  plan.users = 3;
  const OutgoingRequest r = ProbeRequest(plan, *ParseHttpUrl(plan.url), ProbeUser(plan, 1), 4);
  EXPECT_EQ(r.label, "probe-1");
  EXPECT_EQ(r.target, "/u/probe-1?n=4");
  EXPECT_EQ(r.headers, (std::vector<HttpHeader>{{"X-User", "probe-1"}}));
  EXPECT_EQ(r.body, R"({"id": "probe-1", "n": 4})");
}

TEST(Probe, EachTrafficHasItsSchedule) {
  ProbePlan plan = At("http://127.0.0.1:1/x");
  plan.users = 3;
  plan.max_per_second = 10;
  plan.duration = std::chrono::seconds(2);
  const Policy policy = Policy::Window(Algorithm::kFixedWindow, 4, std::chrono::seconds(3));
  const auto at = [](double s) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s));
  };
  // Steady: evenly at the rate, the users in turn, within the duration and the most asked.
  Result<std::vector<ProbeSlot>> steady = ProbeSchedule(plan, policy, 100);
  ASSERT_TRUE(steady.ok()) << steady.status();
  ASSERT_EQ(steady->size(), 20u);
  EXPECT_EQ((*steady)[4], (ProbeSlot{at(0.4), 1}));
  EXPECT_EQ(ProbeSchedule(plan, policy, 7)->size(), 7u);
  // Poisson: half the rate on average, users drawn, the same for the same seed.
  plan.traffic = TrafficKind::kPoisson;
  plan.duration = std::chrono::seconds(100);
  Result<std::vector<ProbeSlot>> poisson = ProbeSchedule(plan, policy, 100'000);
  ASSERT_TRUE(poisson.ok()) << poisson.status();
  EXPECT_GT(poisson->size(), 400u);
  EXPECT_LT(poisson->size(), 600u);
  std::set<int64_t> users;
  for (const ProbeSlot& slot : *poisson) users.insert(slot.user);
  EXPECT_EQ(users, (std::set<int64_t>{0, 1, 2}));
  EXPECT_EQ(*ProbeSchedule(plan, policy, 100'000), *poisson);
  plan.seed = 2;
  EXPECT_NE(*ProbeSchedule(plan, policy, 100'000), *poisson);
  // Bursts: twice the limit at once, a user each, one each window divided by the users.
  plan.traffic = TrafficKind::kBurst;
  plan.duration = std::chrono::seconds(3);
  Result<std::vector<ProbeSlot>> bursts = ProbeSchedule(plan, policy, 100);
  ASSERT_TRUE(bursts.ok()) << bursts.status();
  ASSERT_EQ(bursts->size(), 24u);
  EXPECT_EQ((*bursts)[7], (ProbeSlot{at(0), 0}));
  EXPECT_EQ((*bursts)[8], (ProbeSlot{at(1), 1}));
  EXPECT_EQ((*bursts)[23], (ProbeSlot{at(2), 2}));
  plan.burst_size = 3;
  EXPECT_EQ(ProbeSchedule(plan, policy, 100)->size(), 9u);
}

TEST(Probe, TheBoundaryTrafficSpendsTheLimitEitherSideOfTheEdge) {
  ProbePlan plan = At("http://127.0.0.1:1/x");
  plan.traffic = TrafficKind::kBoundaryAttack;
  plan.duration = std::chrono::seconds(20);
  const Policy policy = Policy::Window(Algorithm::kSlidingLog, 4, std::chrono::seconds(10));
  const auto s = [](double v) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(v));
  };
  const ProbeEdge edge{s(5), s(7)};
  Result<std::vector<ProbeSlot>> attack = ProbeSchedule(plan, policy, 100, edge);
  ASSERT_TRUE(attack.ok()) << attack.status();
  ASSERT_EQ(attack->size(), 8u);
  EXPECT_EQ(attack->front(), (ProbeSlot{s(4), 0}));  // a second before the edge can be
  EXPECT_EQ((*attack)[3], (ProbeSlot{s(4.75), 0}));
  EXPECT_EQ((*attack)[4], (ProbeSlot{s(7), 0}));  // from when it surely is past
  EXPECT_EQ(attack->back(), (ProbeSlot{s(7.75), 0}));
  // All of it inside one window: a shorter window is refused, and so is an edge past the end.
  const Policy short_window = Policy::Window(Algorithm::kSlidingLog, 4, std::chrono::seconds(2));
  Result<std::vector<ProbeSlot>> refused = ProbeSchedule(plan, short_window, 100, edge);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "boundary traffic needs a window of at least 2.7s: the server's reset header leaves "
            "its edge 2s unsure, and the attack must fit in one window");
  plan.duration = std::chrono::seconds(6);
  refused = ProbeSchedule(plan, policy, 100, edge);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "the server's window ends 7s after the start, but --duration is 6s: boundary "
            "traffic needs --duration 9s or more");
}

TEST(Probe, TheWindowsEdgeIsReadFromTheResetHeaders) {
  HttpExchange e;
  e.sent = FromUnixMillis(1'700'000'000'000);
  e.answered = e.sent + std::chrono::milliseconds(3);
  EXPECT_EQ(WindowEdgeFromHeaders(e), std::nullopt);
  // Seconds from now, rounded either way: a second either side of sent..answered + t.
  e.headers = {{"X-RateLimit-Reset", "30"}};
  EXPECT_EQ(WindowEdgeFromHeaders(e),
            std::pair(e.sent + std::chrono::seconds(29), e.answered + std::chrono::seconds(31)));
  // A unix time: a second either side of it.
  e.headers = {{"X-RateLimit-Reset", "1700000040"}};
  EXPECT_EQ(WindowEdgeFromHeaders(e),
            std::pair(FromUnixMillis(1'700'000'039'000), FromUnixMillis(1'700'000'041'000)));
  // RateLimit's t comes first; a value that is no whole number is passed over.
  e.headers = {{"X-RateLimit-Reset", "soon"}, {"RateLimit", R"("p";r=1;t=5)"}};
  EXPECT_EQ(WindowEdgeFromHeaders(e),
            std::pair(e.sent + std::chrono::seconds(4), e.answered + std::chrono::seconds(6)));
}

}  // namespace
}  // namespace ratelab
