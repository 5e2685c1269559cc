// `ratelab probe`'s run against small fixture HTTP servers on loopback, each an
// honest fixed window of 2 a minute per user or one that lies in one way (`ratelab serve` is
// probed in probe_serve_test.cc).
#include "live/probe_run.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "impl/core/system_clock.h"
#include "impl/service/http_server.h"
#include "impl/service/serve.h"
#include "impl/service/service.h"
#include "live/probe_test_util.h"
#include "model/reference_model.h"

namespace ratelab {
namespace {

using testing_probe::FindingChecks;
using testing_probe::kLimit;
using testing_probe::PlanFor;
using testing_probe::Probe;

// A server on a thread of the test's, answering with `handler`, stopped at the end.
class Fixture {
 public:
  explicit Fixture(HttpServer::Handler handler) {
    HttpServerOptions options;
    options.port = 0;
    Result<std::unique_ptr<HttpServer>> listening = HttpServer::Listen(options, std::move(handler));
    EXPECT_TRUE(listening.ok()) << listening.status();
    server_ = *std::move(listening);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Fixture() {
    server_->Stop();
    thread_.join();
  }
  std::string Url(const std::string& target) const {
    return absl::StrCat("http://127.0.0.1:", server_->port(), target);
  }

 private:
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

// How a fixture lies.
enum class Lie {
  kNone,            // an honest fixed window of 2 a minute per user, aligned to the minute
  kAdmitsAll,       // admits everything, its headers saying otherwise
  kNoRetryAfter,    // a 429 without Retry-After
  kRetryAfterMs,    // Retry-After in milliseconds
  kBadRateLimit,    // a RateLimit field whose r is not an Integer
  kRemainingHigh,   // X-RateLimit-Remaining above the limit
  kServerErrors,    // every third request a 503
  kResetLate,       // X-RateLimit-Reset an hour after the window ends
  kResetPast,       // X-RateLimit-Reset two minutes ago
  kDeniedInBody,    // a denial is a 200 whose body says so
  kForgets,         // every fourth request finds its user's count lost
  kRemainingStuck,  // X-RateLimit-Remaining says limit - 1 after every admission
  kDeniesEarly,     // denies the last request of each window's allowance
};

// A fixed window of kLimit a minute per user (the path's last segment), on the system clock,
// answering as `lie` says.
HttpServer::Handler Limiter(Lie lie) {
  struct State {
    std::mutex mu;
    std::map<std::pair<std::string, int64_t>, int64_t> counts;
    int64_t requests = 0;
  };
  auto state = std::make_shared<State>();
  return [state, lie](const HttpRequest& request) {
    const SystemClock clock;
    const int64_t now_s = ToUnixNanos(clock.Now()) / 1'000'000'000;
    const int64_t window = now_s / 60;
    const std::string user = request.path.substr(request.path.rfind('/') + 1);
    std::lock_guard lock(state->mu);
    if (lie == Lie::kServerErrors && ++state->requests % 3 == 0) {
      return HttpResponse{503, {}, R"({"error":"overloaded"})"};
    }
    int64_t& count = state->counts[{user, window}];
    if (lie == Lie::kForgets && ++state->requests % 4 == 0) count = 0;
    const bool allowed =
        lie == Lie::kAdmitsAll || count < (lie == Lie::kDeniesEarly ? kLimit - 1 : kLimit);
    if (count < kLimit) ++count;
    int64_t remaining = kLimit - count;
    if (lie == Lie::kRemainingHigh) remaining = 10;
    if (lie == Lie::kRemainingStuck && allowed) remaining = kLimit - 1;
    const int64_t reset = (window + 1) * 60;
    HttpResponse answer{allowed || lie == Lie::kDeniedInBody ? 200 : 429,
                        {},
                        allowed ? R"({"ok":true})" : R"({"error":"slow down"})"};
    answer.headers.push_back({"X-RateLimit-Limit", absl::StrCat(kLimit)});
    answer.headers.push_back({"X-RateLimit-Remaining", absl::StrCat(remaining)});
    answer.headers.push_back(
        {"X-RateLimit-Reset", absl::StrCat(lie == Lie::kResetLate   ? reset + 3600
                                           : lie == Lie::kResetPast ? now_s - 120
                                                                    : reset)});
    answer.headers.push_back(
        {"RateLimit-Policy", absl::StrCat(R"("per-user";q=)", kLimit, ";w=60")});
    answer.headers.push_back(
        {"RateLimit", lie == Lie::kBadRateLimit
                          ? std::string(R"("per-user";r=1.5;t=3)")
                          : absl::StrCat(R"("per-user";r=)", remaining, ";t=", reset - now_s)});
    if (!allowed && lie != Lie::kNoRetryAfter) {
      const int64_t wait = reset - now_s;
      answer.headers.push_back(
          {"Retry-After", absl::StrCat(lie == Lie::kRetryAfterMs ? wait * 1000 : wait)});
    }
    return answer;
  };
}

// Waits, when need be, until the fixtures' minute is at least two seconds old and has three
// more to run. Their reset header is in whole seconds, so an admission in a window's first second
// is not surely in it, nor is one in its last second surely before the reset: a check of Remaining
// against the admissions before it, or of a rise, needs a run clear of both.
void AwayFromAMinutesEdge() {
  const SystemClock clock;
  for (;;) {
    const int64_t second = ToUnixNanos(clock.Now()) / 1'000'000'000 % 60;
    if (second >= 2 && second < 57) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One user asking one request at a time, clear of a minute's edge: each answer follows from the
// ones before it.
ProbePlan OneUserPlanFor(const std::string& url) {
  ProbePlan plan = PlanFor(url);
  plan.users = 1;
  plan.concurrency = 1;
  AwayFromAMinutesEdge();
  return plan;
}

// `workers` limiters of `policy` behind one port, each with counts of its own, taking the requests
// in turn: one worker is an honest limiter; two are what a memory store behind Node's cluster
// module, PM2 or two replicas is, each admitting the policy's allowance, twice it in all. With
// `headers`, each answer states the limit and what remains (of its own worker's count).
HttpServer::Handler Workers(const Policy& policy, int workers, bool headers) {
  struct State {
    std::mutex mu;
    std::vector<std::unique_ptr<ReferenceModel>> models;
    size_t next = 0;
  };
  auto state = std::make_shared<State>();
  for (int i = 0; i < workers; ++i) state->models.push_back(MakeReferenceModel(policy));
  return [state, headers](const HttpRequest& request) {
    const std::string user = request.path.substr(request.path.rfind('/') + 1);
    std::lock_guard lock(state->mu);
    ReferenceModel& worker = *state->models[state->next++ % state->models.size()];
    const Decision d = worker.Decide(user, SystemClock().Now(), 1);
    HttpResponse answer{d.allowed ? 200 : 429, {}, d.allowed ? "{}" : R"({"error":"slow down"})"};
    if (headers) {
      answer.headers.push_back({"X-RateLimit-Limit", absl::StrCat(d.limit)});
      answer.headers.push_back({"X-RateLimit-Remaining", absl::StrCat(d.remaining)});
    }
    return answer;
  };
}

// Two workers each counting alone are caught at the policy each enforces, with headers and
// without, whatever the model; one worker alone is not accused, its denials are found false when
// it is held to a looser promise, and its answers are decided linearizable (never "unknown": a
// window opened, or a bucket refilled, at a request's own instant is placed among its interval's
// nanoseconds exactly).
void TwoWorkersAreCaughtAndOneIsNot(const Policy& policy) {
  SCOPED_TRACE(policy.ToString());
  const auto plan_for = [&](const Fixture& server) {
    ProbePlan plan = PlanFor(server.Url("/hit/{user}"));
    plan.policy = policy;
    plan.users = 3;  // the users in turn, so that each user's requests go to both workers
    plan.concurrency = 2;
    plan.max_per_second = 100;
    plan.max_requests = 150;
    plan.duration = std::chrono::milliseconds(1500);
    plan.retry_after_wait = Duration::zero();
    plan.fresh_users = true;  // each server is new
    return plan;
  };
  for (const bool headers : {true, false}) {
    SCOPED_TRACE(headers ? "with headers" : "without headers");
    Fixture honest(Workers(policy, 1, headers));
    const ProbeResult kept = Probe(plan_for(honest));
    EXPECT_GT(kept.denied, 0);
    EXPECT_TRUE(kept.violations.empty()) << kept.violations.front().ToString();
    EXPECT_TRUE(kept.findings.empty()) << kept.findings.front().summary;
    EXPECT_EQ(kept.linearizability.verdict, LinearVerdict::kLinearizable)
        << kept.linearizability.lead;
    // Held to a looser promise than it keeps (one more a window, a bucket one bigger), the
    // honest server's denials are false denials.
    ProbePlan looser = plan_for(honest);
    ++looser.policy.limit;
    const ProbeResult strict = Probe(looser);
    EXPECT_TRUE(strict.violations.empty()) << strict.violations.front().ToString();
    EXPECT_EQ(strict.linearizability.verdict, LinearVerdict::kNotLinearizable)
        << strict.linearizability.lead;
    ASSERT_TRUE(strict.linearizability.violation.has_value());
    EXPECT_TRUE(strict.linearizability.violation->witness.back().denied())
        << strict.linearizability.violation->ToString();
    Fixture twice(Workers(policy, 2, headers));
    const ProbeResult caught = Probe(plan_for(twice));
    EXPECT_GT(caught.admitted, kept.admitted * 3 / 2);
    EXPECT_FALSE(caught.violations.empty() && !caught.linearizability.violation)
        << "nothing found in " << caught.admitted << " admissions";
    EXPECT_NE(caught.linearizability.verdict, LinearVerdict::kUnknown)
        << caught.linearizability.lead;
    if (policy.algorithm == Algorithm::kAnchoredWindow) {
      // The promise itself, in the window a user's first admission opened: twice its limit.
      ASSERT_FALSE(caught.violations.empty()) << "only " << caught.linearizability.lead;
      EXPECT_NE(caught.violations.front().summary.find(
                    "all in the one window the first of them opened (the key quiet before "
                    "them), limit 5 per 1s"),
                std::string::npos)
          << caught.violations.front().summary;
    }
  }
}

TEST(Probe, TwoWorkersEachCountingAloneAreCaughtOnAnAnchoredWindow) {
  TwoWorkersAreCaughtAndOneIsNot(
      Policy::Window(Algorithm::kAnchoredWindow, 5, std::chrono::seconds(1)));
}

TEST(Probe, TwoWorkersEachCountingAloneAreCaughtOnAFixedWindow) {
  TwoWorkersAreCaughtAndOneIsNot(
      Policy::Window(Algorithm::kFixedWindow, 5, std::chrono::seconds(1)));
}

TEST(Probe, TwoWorkersEachCountingAloneAreCaughtOnASlidingLog) {
  TwoWorkersAreCaughtAndOneIsNot(
      Policy::Window(Algorithm::kSlidingLog, 5, std::chrono::seconds(1)));
}

TEST(Probe, TwoWorkersEachCountingAloneAreCaughtOnABucket) {
  TwoWorkersAreCaughtAndOneIsNot(
      Policy::Bucket(Algorithm::kTokenBucket, 5, std::chrono::milliseconds(200)));
  TwoWorkersAreCaughtAndOneIsNot(
      Policy::Bucket(Algorithm::kGcra, 5, std::chrono::milliseconds(200)));
}

TEST(Probe, AnHonestLimiterIsNotAccused) {
  Fixture honest(Limiter(Lie::kNone));
  const ProbeResult r = Probe(PlanFor(honest.Url("/hit/{user}")));
  EXPECT_EQ(r.exchanges.size(), 12u);
  EXPECT_GE(r.admitted, 4);  // two users, two each (four more if a minute began meanwhile)
  EXPECT_GT(r.denied, 0);
  EXPECT_TRUE(r.violations.empty()) << r.violations.front().ToString();
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().summary;
  EXPECT_EQ(r.linearizability.verdict, LinearVerdict::kLinearizable);
  EXPECT_TRUE(r.clean());
}

// A limiter that denies the last request of each window's allowance keeps its promise, but no
// order of the requests explains that denial: a false denial, with the admission before it.
TEST(Probe, AFalseDenialIsNotLinearizable) {
  Fixture strict(Limiter(Lie::kDeniesEarly));
  const ProbeResult r = Probe(OneUserPlanFor(strict.Url("/hit/{user}")));
  EXPECT_TRUE(r.violations.empty()) << "the promise is kept";
  ASSERT_EQ(r.linearizability.verdict, LinearVerdict::kNotLinearizable);
  const Violation& v = *r.linearizability.violation;
  EXPECT_EQ(v.invariant, CheckId::kLinearizable);
  ASSERT_EQ(v.witness.size(), 2u) << v.ToString();
  EXPECT_TRUE(v.witness[0].admitted());
  EXPECT_TRUE(v.witness[1].denied());
  EXPECT_NE(v.summary.find("1 of the key's 12 calls can be placed"), std::string::npos)
      << v.summary;
  EXPECT_FALSE(r.clean());
}

TEST(Probe, ALimiterThatAdmitsTooManyIsFoundWithAWitnessOfThree) {
  Fixture lenient(Limiter(Lie::kAdmitsAll));
  const ProbeResult r = Probe(PlanFor(lenient.Url("/hit/{user}")));
  EXPECT_EQ(r.admitted, 12);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().invariant, CheckId::kAlignedWindowCap);
  EXPECT_EQ(r.violations.front().witness.size(), static_cast<size_t>(kLimit + 1));
}

TEST(Probe, EachDishonestHeaderIsCaughtByItsCheck) {
  const std::pair<Lie, std::string> lies[] = {
      {Lie::kNoRetryAfter, "retry-after-missing"}, {Lie::kRetryAfterMs, "retry-after-too-long"},
      {Lie::kBadRateLimit, "header-syntax"},       {Lie::kRemainingHigh, "remaining-above-model"},
      {Lie::kServerErrors, "server-errors"},       {Lie::kResetLate, "reset-beyond-model"},
      {Lie::kResetPast, "reset-in-the-past"},      {Lie::kRemainingStuck, "remaining-above-model"},
  };
  for (const auto& [lie, check] : lies) {
    AwayFromAMinutesEdge();
    Fixture liar(Limiter(lie));
    ProbePlan plan = PlanFor(liar.Url("/hit/{user}"));
    plan.required = {CheckId::kRetryAfterMissing};
    const ProbeResult r = Probe(plan);
    std::vector<std::string> found = FindingChecks(r);
    // A minute that begins during the run raises Remaining an hour before the reset it named.
    if (lie == Lie::kResetLate) std::erase(found, "remaining-rose");
    EXPECT_EQ(found, std::vector<std::string>{check}) << check;
    EXPECT_TRUE(r.violations.empty()) << check << ": " << r.violations.front().ToString();
    for (const ProbeFinding& f : r.findings) {
      EXPECT_FALSE(f.exchanges.empty()) << f.summary;
    }
  }
  // Not asked for, a 429 without Retry-After is a note, and the probe is clean.
  AwayFromAMinutesEdge();
  Fixture silent(Limiter(Lie::kNoRetryAfter));
  const ProbeResult r = Probe(PlanFor(silent.Url("/hit/{user}")));
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().summary;
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0].check, CheckId::kRetryAfterMissing);
}

// Counts lost: Remaining rises within the window, before the reset the server named (and the
// lost counts admit too many).
TEST(Probe, ARemainingThatRisesBeforeTheResetIsCaught) {
  Fixture forgetful(Limiter(Lie::kForgets));
  ProbePlan plan = OneUserPlanFor(forgetful.Url("/hit/{user}"));
  const ProbeResult r = Probe(plan);
  // Its Remaining after a lost count is above what the admissions before it leave, too.
  EXPECT_EQ(FindingChecks(r),
            (std::vector<std::string>{"remaining-above-model", "remaining-rose"}));
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_NE(r.findings[1].summary.find("more than the 0 #"), std::string::npos)
      << r.findings[1].summary;
  EXPECT_FALSE(r.violations.empty());
  // Held to a sliding log, whose allowance comes back a request at a time, a rise is not a
  // finding (what is above the model still is).
  plan.policy = Policy::Window(Algorithm::kSlidingLog, kLimit, std::chrono::minutes(1));
  plan.user_prefix = "sliding-";
  EXPECT_EQ(FindingChecks(Probe(plan)), std::vector<std::string>{"remaining-above-model"});
}

TEST(Probe, ADenialTheBodyStatesIsADenialWhenSaidSo) {
  Fixture fixture(Limiter(Lie::kDeniedInBody));
  ProbePlan plan = PlanFor(fixture.Url("/hit/{user}"));
  plan.denied_statuses = {};
  plan.denied_bodies = {R"("error":"slow down")"};
  const ProbeResult told = Probe(plan);
  EXPECT_GT(told.denied, 0);
  EXPECT_TRUE(told.violations.empty()) << told.violations.front().ToString();
  EXPECT_TRUE(told.findings.empty()) << told.findings.front().summary;
  // Not told, every 200 is an admission, and too many.
  plan.denied_bodies = {};
  plan.user_prefix = "other-";
  EXPECT_FALSE(Probe(plan).violations.empty());
}

TEST(Probe, TheLimitAndWindowCanBeLearntFromTheHeaders) {
  Fixture honest(Limiter(Lie::kNone));
  ProbePlan plan = PlanFor(honest.Url("/hit/{user}"));
  plan.policy = Policy::Window(Algorithm::kFixedWindow, 100, std::chrono::seconds(1));
  plan.policy_from_headers = true;
  const ProbeResult learnt = Probe(plan);
  EXPECT_EQ(learnt.policy,
            Policy::Window(Algorithm::kFixedWindow, kLimit, std::chrono::minutes(1)));
  EXPECT_TRUE(learnt.violations.empty()) << learnt.violations.front().ToString();
  Fixture lenient(Limiter(Lie::kAdmitsAll));
  plan.url = lenient.Url("/hit/{user}");
  EXPECT_FALSE(Probe(plan).violations.empty());
  // A server that states no limit: an error, not a guess.
  Fixture silent([](const HttpRequest&) { return HttpResponse{200, {}, "{}"}; });
  plan.url = silent.Url("/");
  const SystemClock clock;
  const Result<ProbeResult> r = RunProbe(plan, clock);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--from-headers: no answer had"), std::string::npos)
      << r.status();
}

// An anchored window of 2 per 2 s per user (opened by the user's first request), whose
// Retry-After is the wait left, rounded up, plus `lie_s` (negative: less).
HttpServer::Handler AnchoredLimiter(int64_t lie_s) {
  struct State {
    std::mutex mu;
    std::map<std::string, std::pair<Instant, int64_t>> windows;  // opened at, count
  };
  auto state = std::make_shared<State>();
  return [state, lie_s](const HttpRequest& request) {
    constexpr Duration kWindow = std::chrono::seconds(2);
    const Instant now = SystemClock().Now();
    std::lock_guard lock(state->mu);
    auto& [opened, count] = state->windows[request.path];
    if (count == 0 || now >= opened + kWindow) {
      opened = now;
      count = 0;
    }
    if (count < kLimit) {
      ++count;
      return HttpResponse{200, {}, "{}"};
    }
    const int64_t wait = std::chrono::ceil<std::chrono::seconds>(opened + kWindow - now).count();
    return HttpResponse{429, {{"Retry-After", absl::StrCat(wait + lie_s)}}, "{}"};
  };
}

ProbePlan AnchoredPlan(const std::string& url) {
  ProbePlan plan = PlanFor(url);
  plan.policy = Policy::Window(Algorithm::kAnchoredWindow, kLimit, std::chrono::seconds(2));
  plan.users = 1;
  plan.max_requests = 40;
  return plan;
}

TEST(Probe, AnHonestRetryAfterIsRetriedEarlyAndOnTimeAndNotAccused) {
  Fixture honest(AnchoredLimiter(0));
  const ProbeResult r = Probe(AnchoredPlan(honest.Url("/{user}")));
  EXPECT_TRUE(r.retry_after_checked) << r.retry_after_note;
  EXPECT_EQ(r.retry_after_note, "");
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().summary;
  EXPECT_TRUE(r.violations.empty()) << r.violations.front().ToString();
}

TEST(Probe, TheRetryAfterCheckSaysWhyItDoesNotRun) {
  Fixture honest(AnchoredLimiter(0));
  ProbePlan plan = AnchoredPlan(honest.Url("/{user}"));
  plan.retry_after_wait = Duration(0);
  EXPECT_EQ(Probe(plan).retry_after_note, "--retry-after-wait 0");
  plan = AnchoredPlan(honest.Url("/{user}"));
  plan.policy.limit = 1000;  // 1003 tries a user, one at a time: too slow to be worth it
  plan.max_requests = 5000;
  plan.duration = std::chrono::milliseconds(200);
  const ProbeResult r = Probe(plan);
  EXPECT_FALSE(r.retry_after_checked);
  EXPECT_EQ(r.retry_after_note, "a limit of 1000 is too many to spend one request at a time");
  EXPECT_EQ(r.retry_after_requests, 0);
}

TEST(Probe, ARetryAfterLongerOrShorterThanTheWaitIsCaught) {
  Fixture longer(AnchoredLimiter(2));
  ProbeResult r = Probe(AnchoredPlan(longer.Url("/{user}")));
  // 4 s is also longer than a window of 2 s ever makes anyone wait.
  ASSERT_EQ(FindingChecks(r),
            (std::vector<std::string>{"retry-after-too-long", "retry-after-dishonest"}));
  EXPECT_NE(r.findings.back().summary.find("was admitted"), std::string::npos)
      << r.findings.back().summary;
  EXPECT_EQ(r.findings.back().exchanges.size(), 2u);
  Fixture shorter(AnchoredLimiter(-1));
  r = Probe(AnchoredPlan(shorter.Url("/{user}")));
  ASSERT_EQ(FindingChecks(r), std::vector<std::string>{"retry-after-dishonest"});
  EXPECT_NE(r.findings.front().summary.find("was denied again"), std::string::npos)
      << r.findings.front().summary;
}

TEST(Probe, NothingListeningOrNothingJudgeableIsAnErrorNotAPass) {
  const SystemClock clock;
  uint16_t closed_port = 0;
  {
    Fixture gone(Limiter(Lie::kNone));
    closed_port = static_cast<uint16_t>(std::stoi(gone.Url("").substr(17)));
  }
  ProbePlan plan = PlanFor(absl::StrCat("http://127.0.0.1:", closed_port, "/hit"));
  plan.max_requests = 3;
  Result<ProbeResult> r = RunProbe(plan, clock);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("connection refused (nothing listens there"),
            std::string::npos)
      << r.status();
  Fixture not_found([](const HttpRequest&) { return HttpResponse{404, {}, "{}"}; });
  r = RunProbe(PlanFor(not_found.Url("/nowhere")), clock);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("12 x 404"), std::string::npos) << r.status();
}

// A run holds every exchange until it ends: only the headers the probe reads are kept.
TEST(Probe, KeepsOnlyTheHeadersItReads) {
  Fixture chatty([](const HttpRequest&) {
    return HttpResponse{
        200, {{"X-Junk", std::string(4000, 'j')}, {"x-ratelimit-limit", "2"}}, "{}"};
  });
  ProbePlan plan = PlanFor(chatty.Url("/"));
  plan.max_requests = 3;
  const ProbeResult r = Probe(plan);
  ASSERT_EQ(r.exchanges.size(), 3u);
  for (const HttpExchange& e : r.exchanges) {
    EXPECT_EQ(e.headers, (std::vector<HttpHeader>{{"x-ratelimit-limit", "2"}}));
  }
}

TEST(Probe, TheRateCapHoldsABurstToItsRate) {
  Fixture server(Limiter(Lie::kNone));
  ProbePlan plan = PlanFor(server.Url("/u/{user}"));
  plan.traffic = TrafficKind::kBurst;
  plan.burst_size = 6;
  plan.users = 1;
  plan.max_per_second = 3;
  plan.max_requests = 6;
  plan.duration = std::chrono::seconds(3);
  const ProbeResult r = Probe(plan);
  ASSERT_EQ(r.exchanges.size(), 6u);
  // Three at once, and the next three no sooner than a second after the first three.
  for (size_t i = 3; i < 6; ++i) {
    EXPECT_GE(r.exchanges[i].sent - r.exchanges[i - 3].sent, std::chrono::seconds(1)) << i;
  }
  EXPECT_LT(r.exchanges[2].sent - r.exchanges[0].sent, std::chrono::milliseconds(500));
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// A server on loopback that answers every request on a connection with `answer`, as raw bytes
// (no HTTP server would write a length it does not send).
class RawServer {
 public:
  explicit RawServer(std::string answer) : answer_(std::move(answer)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // closed: the test is over
        connections_.emplace_back([this, c] {
          char buf[4096];
          while (recv(c, buf, sizeof buf, 0) > 0) {
            if (send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL) < 0) break;
          }
          close(c);
        });
      }
    });
  }
  ~RawServer() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (std::thread& t : connections_) t.join();
  }
  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  std::string answer_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
  std::vector<std::thread> connections_;
};

// A server whose answer says a length no client should hold (or is not HTTP) once ended probe
// (std::bad_alloc: Beast 1.74 reserved the whole length before it saw the limit): probe reads
// at most 1 MiB of body and 64 KiB of header, and an answer past them is a finding of the server.
TEST(Probe, AnAnswerPastWhatProbeReadsIsAFindingOfTheServer) {
  for (const auto& [answer, why] : std::vector<std::pair<std::string, std::string>>{
           {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\nabc",
            "its answer's body is longer than the 1048576 bytes probe reads"},
           {"HTTP/1.1 200 OK\r\nX-A: " + std::string(70000, 'a') + "\r\n\r\n",
            "its answer's header is longer than the 65536 bytes probe reads"},
           {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab",
            "its answer is not HTTP/1.1"}}) {
    SCOPED_TRACE(why);
    RawServer server(answer);
    ProbePlan plan = PlanFor(server.Url("/hit/{user}"));
    plan.max_requests = 4;
    plan.retry_after_wait = Duration::zero();
    const SystemClock clock;
    const Result<ProbeResult> r = RunProbe(plan, clock);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(FindingChecks(*r), std::vector<std::string>{"unreadable-answers"});
    ASSERT_FALSE(r->findings.empty());
    EXPECT_TRUE(absl::StrContains(r->findings.front().summary, "of 4 answers: #0: " + why))
        << r->findings.front().summary;
  }
}

}  // namespace
}  // namespace ratelab
