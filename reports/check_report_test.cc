// Every witness `check` prints breaks, as printed, the promise it is printed for: scripts with
// flaws drawn at random (a window kept as a key's TTL that takes its last millisecond or more as
// expired, or is set short; a log on the client's clock whose TTL or cut is off, or whose limit
// is), searched as `check` searches them; each finding's report is written as JSON, read back,
// and its witness alone judged again by the check that found it.
#include "reports/check_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "reports/run_report.h"
#include "sim/protocol_under_test.h"
#include "sim/random.h"

namespace ratelab {
namespace {

struct Drawn {
  std::string script;
  Algorithm model;
  std::string args;
};

// A TTL-anchored window: a key whose PTTL is at most `cut` is taken as expired (-1: Redis's own
// reading), `extra` more admitted than the limit, and the window set `pad_ms` longer.
Drawn TtlWindow(Random& r) {
  const int64_t cut = std::array<int64_t, 3>{-1, 0, 4}[r.Uniform(0, 3)];
  const int64_t extra = r.Uniform(0, 4) == 0 ? 1 : 0;
  const int64_t pad = std::array<int64_t, 3>{0, 0, -3}[r.Uniform(0, 3)];
  return {"local limit = tonumber(ARGV[2]) + " + std::to_string(extra) +
              "\nlocal ttl = redis.call('PTTL', KEYS[1])\nif ttl <= " + std::to_string(cut) +
              " then\n  redis.call('SET', KEYS[1], 1, 'PX', tonumber(ARGV[1]) + " +
              std::to_string(pad) +
              ")\n  return 1\nend\nif redis.call('INCR', KEYS[1]) > limit then return 0 end\n"
              "return 1\n",
          Algorithm::kAnchoredWindow, "{window_ms},{limit}"};
}

// A sorted-set log on the client's clock: entries up to `cut` ms inside the window dropped, `extra`
// more admitted, its TTL the window plus `pad_ms`.
Drawn ClientLog(Random& r) {
  const int64_t cut = std::array<int64_t, 3>{0, 0, 2}[r.Uniform(0, 3)];
  const int64_t extra = r.Uniform(0, 4) == 0 ? 1 : 0;
  const int64_t pad = std::array<int64_t, 3>{0, 1000, 1000}[r.Uniform(0, 3)];
  return {
      "local now = tonumber(ARGV[1])\nlocal window = tonumber(ARGV[2])\n"
      "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window + " +
          std::to_string(cut) + ")\nif redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) + " +
          std::to_string(extra) +
          " then return 0 end\nredis.call('ZADD', KEYS[1], now, ARGV[4])\n"
          "redis.call('PEXPIRE', KEYS[1], window + " +
          std::to_string(pad) + ")\nreturn 1\n",
      Algorithm::kSlidingLog, "{now_ms},{window_ms},{limit},{request_id}"};
}

// What the checks judge of a request comes back from its witness as printed, to the nanosecond.
TEST(CheckReport, AWitnessAsPrintedReadsBackToTheHistoryItShows) {
  const Instant start = kDefaultScenarioStart;
  History h(6);
  for (size_t i = 0; i < h.size(); ++i) {
    HistoryEvent& e = h[i];
    e.id = static_cast<int64_t>(i);
    e.key = "user:u" + std::to_string(i % 2);
    e.node = static_cast<int>(i % 3);
    e.cost = 1 + static_cast<int64_t>(i);
    e.invoke = start + std::chrono::nanoseconds(1'234'567'891 * static_cast<int64_t>(i + 1));
    e.steps.push_back({"EVALSHA x", e.invoke + std::chrono::nanoseconds(1'500'001)});
    e.apply = e.steps.back().at;
    e.complete = e.apply + std::chrono::nanoseconds(999'999);
    e.decision = Decision{};
  }
  h[0].decision->allowed = true;
  h[1].decision->retry_after = std::chrono::nanoseconds(167'639'001);
  h[2].decision->retry_after = kNever;
  h[3].decision->allowed = true;
  h[3].decision->wait = std::chrono::microseconds(2'500);
  h[4].decision->fallback = true;
  h[5].decision.reset();
  const History back = HistoryOf(WitnessEvents(h, start), start);
  ASSERT_EQ(back.size(), h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(back[i].id, h[i].id);
    EXPECT_EQ(back[i].key, h[i].key);
    EXPECT_EQ(back[i].node, h[i].node);
    EXPECT_EQ(back[i].cost, h[i].cost);
    EXPECT_EQ(back[i].invoke, h[i].invoke) << i;
    EXPECT_EQ(back[i].apply, h[i].apply) << i;
    EXPECT_EQ(back[i].steps.back().at, h[i].steps.back().at) << i;
    EXPECT_EQ(back[i].steps.back().label, h[i].steps.back().label);
    EXPECT_EQ(back[i].decision.has_value(), h[i].decision.has_value()) << i;
    if (!h[i].decision) continue;
    EXPECT_EQ(back[i].complete, h[i].complete) << i;
    EXPECT_EQ(back[i].decision->allowed, h[i].decision->allowed) << i;
    EXPECT_EQ(back[i].decision->retry_after, h[i].decision->retry_after) << i;
    EXPECT_EQ(back[i].decision->wait, h[i].decision->wait) << i;
    EXPECT_EQ(back[i].decision->fallback, h[i].decision->fallback) << i;
  }
}

TEST(CheckReport, EveryWitnessOfARandomFlawedScriptBreaksItsPromiseAsPrinted) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ratelab-as-printed-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  Random random(20261129);
  int found = 0, judged = 0;
  constexpr int kScripts = 60;
  for (int i = 0; i < kScripts; ++i) {
    const Drawn d = i % 2 == 0 ? TtlWindow(random) : ClientLog(random);
    const std::filesystem::path path = dir / ("drawn" + std::to_string(i) + ".lua");
    std::ofstream(path) << d.script;
    UserScript script;
    script.path = path.string();
    script.model = d.model;
    script.args = d.args;
    const Result<std::shared_ptr<const ProtocolInfo>> protocol = ResolveProtocol("", script);
    ASSERT_TRUE(protocol.ok()) << protocol.status() << "\n" << d.script;
    SearchOptions o;
    const std::array<Duration, 3> windows = {
        std::chrono::seconds(1), std::chrono::milliseconds(100), std::chrono::milliseconds(20)};
    o.base.policy = Policy::Window(d.model, 1 + static_cast<int64_t>(random.Uniform(0, 3)),
                                   windows[random.Uniform(0, 3)]);
    o.base.checks = DefaultChecks(**protocol);
    o.faults = {FaultKind::kCrash, FaultKind::kStoreRestart};
    o.seeds = {1, 40, 1};
    o.shrink_budget = 400;
    const Result<SearchResult> result = Search(*protocol, o);
    ASSERT_TRUE(result.ok()) << result.status();
    if (!result->finding) continue;
    ++found;
    const CheckReport written = MakeCheckReport(*protocol, o, *result, "replay");
    const Result<CheckReport> read =
        CheckReportFromJson(nlohmann::json::parse(ToJson(written).dump()));
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_TRUE(read->violation);
    const std::optional<bool> breaks =
        BreaksAsPrinted(*protocol, result->finding->minimal.policy, *read->violation, read->start);
    if (!breaks) continue;  // a check a witness alone cannot be judged by
    ++judged;
    EXPECT_TRUE(*breaks) << d.script << "\n" << RenderCheckText(*read);
    EXPECT_EQ(read->violation->summary.find("does not break it"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
  std::printf("%d of %d drawn scripts found flawed, %d witnesses judged again as printed\n", found,
              kScripts, judged);
  EXPECT_GE(judged, kScripts / 3) << "too few findings to say anything of their witnesses";
}

// A check's page read from a file whose instants the clock cannot hold (its start in 2200, a
// request 126 years on) gives that request's offset instead of overflowing the clock.
TEST(CheckReport, APagesInstantPastTheClocksRangeIsGivenAsAnOffset) {
  CheckReport r;
  r.protocol = "p";
  r.verdict = CheckVerdict::kViolation;
  r.start = *ParseInstant("2200-01-01T00:00:00Z");
  ViolationReport v;
  v.key = "k";
  v.witness.push_back(WitnessEvent{0, "k", 1, 1, "", "admitted", 3.9e9, 3.9e9 + 1, {}});
  r.violation = v;
  const std::string html = RenderCheckHtml(r);
  EXPECT_NE(html.find(" from the start</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<svg class=\"witness\""), std::string::npos);
}

}  // namespace
}  // namespace ratelab
