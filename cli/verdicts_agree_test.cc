// One answer: every command with --strict or --junit, on a case that breaks and one that keeps,
// says the same in its exit status, its JUnit file, its JSON's "verdict" and its text. (stress,
// which needs a Redis, is in stress_command_test.cc.)
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "cli/cli_test_util.h"
#include "impl/service/http_server.h"
#include "testing/files.h"

namespace ratelab {
namespace {

std::string Temp(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/verdicts-" + name;
  std::filesystem::remove_all(path);
  return path;
}

TEST(OneAnswer, Run) {
  ExpectOneAnswer("run, a fixed window at the claim's edge",
                  SayBoth({"run", ExampleScenario("boundary-attack")}, Temp("run-b.xml")), true);
  ExpectOneAnswer("run, a sliding log under a rule change",
                  SayBoth({"run", ExampleScenario("rule-change")}, Temp("run-k.xml")), false);
  ExpectOneAnswer(
      "run --seeds, a sweep",
      SayBoth({"run", ExampleScenario("boundary-attack"), "--seeds", "2"}, Temp("sweep-b.xml")),
      true);
  ExpectOneAnswer(
      "run --seeds, a sweep that keeps",
      SayBoth({"run", ExampleScenario("rule-change"), "--seeds", "2"}, Temp("sweep-k.xml")), false);
}

// The shards of a sweep put back together say what the whole would have.
TEST(OneAnswer, Merge) {
  for (const auto& [scenario, broken] : std::vector<std::pair<std::string, bool>>{
           {"boundary-attack", true}, {"rule-change", false}}) {
    std::vector<std::string> merge = {"merge"};
    for (const char* shard : {"1/2", "2/2"}) {
      const std::string dir = Temp(scenario + "-shard-" + shard[0]);
      ASSERT_EQ(Ratelab({"run", ExampleScenario(scenario), "--seeds", "2", "--shard", shard,
                         "--out", dir})
                    .exit,
                broken ? kExitViolation : kExitOk);
      merge.push_back(dir + "/result.json");
    }
    ExpectOneAnswer("merge, " + scenario, SayBoth(merge, Temp(scenario + "-merged.xml")), broken);
  }
}

// The claim is a check: a scenario that checks only each limiter's own promise still breaks when
// a limiter admits past its claim, in every view.
TEST(OneAnswer, CompareStrictCountsTheClaim) {
  for (const bool seeds : {false, true}) {
    std::vector<std::string> broke = {"compare", ExampleScenario("bursty-many-users"), "--strict",
                                      "--out", Temp("compare-b")};
    std::vector<std::string> kept = {"compare", ExampleScenario("rule-change"), "--strict", "--out",
                                     Temp("compare-k")};
    if (seeds) {
      for (auto* args : {&broke, &kept}) args->insert(args->end(), {"--seeds", "2"});
    }
    const std::string how = seeds ? " over seeds" : "";
    const Said b = SayBoth(broke, Temp("compare-b.xml"));
    ExpectOneAnswer("compare" + how + ", limiters past the claim", b, true);
    const Said k = SayBoth(kept, Temp("compare-k.xml"));
    ExpectOneAnswer("compare" + how + ", every limiter keeping it", k, false);
    // The report written beside says the same.
    const std::string md = testing_files::Read(broke[4] + "/report.md");
    EXPECT_EQ(md.find("None: every limiter kept every check"), std::string::npos) << md;
    EXPECT_NE(testing_files::Read(broke[4] + "/junit.xml").find("<failure"), std::string::npos);
  }
}

TEST(OneAnswer, Check) {
  ExpectOneAnswer("check, a sliding counter's false denials",
                  SayBoth({"check", "kv-sliding-counter", "--seeds", "20"}, Temp("check-b.xml")),
                  true);
  ExpectOneAnswer(
      "check, a sliding log",
      SayBoth({"check", "memory-sliding-log", "--faults", "none", "--nodes", "1", "--seeds", "3"},
              Temp("check-k.xml")),
      false);
}

// A server that admits each user's first `limit` requests and denies the rest: it keeps
// "`limit` in any hour" over any probe shorter than an hour, whatever its clock.
class FirstOnes {
 public:
  explicit FirstOnes(int64_t limit) {
    HttpServerOptions options;
    options.port = 0;
    server_ = *HttpServer::Listen(options, [this, limit](const HttpRequest& r) {
      const std::lock_guard<std::mutex> lock(mu_);
      return ++seen_[r.path] <= limit ? HttpResponse{200, {}, "{}"} : HttpResponse{429, {}, "{}"};
    });
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~FirstOnes() {
    server_->Stop();
    thread_.join();
  }
  // Forgets every user: the next probe starts afresh.
  void Forget() {
    const std::lock_guard<std::mutex> lock(mu_);
    seen_.clear();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + "/x/{user}";
  }

 private:
  std::mutex mu_;
  std::map<std::string, int64_t> seen_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST(OneAnswer, Probe) {
  FirstOnes three(3);
  const auto probe = [&](const std::string& limit, const std::string& junit) {
    return SayBoth({"probe", three.url(), "--model", "sliding-log", "--limit", limit, "--window",
                    "1h", "--users", "2", "--max-requests", "12", "--max-rps", "200"},
                   junit, [&] { three.Forget(); });
  };
  ExpectOneAnswer("probe, held to 2 an hour", probe("2", Temp("probe-b.xml")), true);
  ExpectOneAnswer("probe, held to 3 an hour", probe("3", Temp("probe-k.xml")), false);
}

}  // namespace
}  // namespace ratelab
