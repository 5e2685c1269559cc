// `ratelab probe` as a user runs it: the plan printed before anything is sent, the verdict in
// the exit status, JSON and JUnit, and bad flags refused before anything is sent.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_test_util.h"
#include "cli/exit_codes.h"
#include "impl/service/http_server.h"
#include "impl/store/redis_server.h"
#include "testing/files.h"
#include "testing/process.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

// A server that admits every request, and says it limits to 2 a minute.
class AdmitsAll {
 public:
  AdmitsAll() {
    HttpServerOptions options;
    options.port = 0;
    server_ = *HttpServer::Listen(options, [](const HttpRequest&) {
      return HttpResponse{200, {{"X-RateLimit-Limit", "2"}}, "{}"};
    });
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~AdmitsAll() {
    server_->Stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/x"; }

 private:
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST(ProbeCommand, SaysWhatItWillSendThenFindsTheOverAdmission) {
  AdmitsAll server;
  const std::string junit = ::testing::TempDir() + "/probe-junit.xml";
  const CliOutcome r =
      Ratelab({"probe", server.url(), "--model", "fixed-window", "--limit", "2", "--window", "1m",
               "--max-requests", "6", "--max-rps", "200", "--json", "--junit", junit});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.err.find("probe: GET " + server.url()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most 6 requests, at most 200 in any second, for at most 10s"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("{user} = probe-"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sent"], 6);
  EXPECT_EQ(j["admitted"], 6);
  // The load's own time, apart from the whole probe's (judging, the Retry-After check).
  EXPECT_GT(j["load_seconds"].get<double>(), 0) << r.out;
  EXPECT_LE(j["load_seconds"].get<double>(), j["seconds"].get<double>()) << r.out;
  ASSERT_FALSE(j["violations"].empty()) << r.out;
  EXPECT_EQ(j["violations"][0]["invariant"], "aligned-window-cap");
  EXPECT_EQ(j["violations"][0]["witness"].size(), 3u);
  EXPECT_EQ(j["violations"][0]["witness"][0]["status"], 200);
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(xml.find("<failure"), std::string::npos) << xml;
  // It never answered 429, so no Retry-After was retried: that check did not run, and is a
  // skipped case with why, never a pass.
  EXPECT_EQ(j["retry_after_checked"], false);
  const size_t retry = xml.find("name=\"retry-after-dishonest\"");
  ASSERT_NE(retry, std::string::npos) << xml;
  EXPECT_EQ(xml.find("<skipped message=\"not checked: ", retry), xml.find("<skipped", retry))
      << xml;
  EXPECT_NE(xml.find("<skipped", retry), std::string::npos) << xml;
  EXPECT_EQ(xml.find("skipped=\"0\""), std::string::npos) << xml;
}

// The denials no order explains are judged for a model whose room a later admission can only
// shrink (a fixed window), and skipped, with why, for one an earlier admission can grow.
TEST(ProbeCommand, FalseDenialsAreJudgedWhereTheModelAllowsAndSkippedWithWhyWhereNot) {
  AdmitsAll server;
  const auto junit_of = [&](const std::string& model) {
    const std::string junit = ::testing::TempDir() + "/probe-fd-" + model + ".xml";
    const CliOutcome r = Ratelab({"probe", server.url(), "--model", model, "--limit", "2",
                                  "--window", "1m", "--max-requests", "6", "--max-rps", "200",
                                  "--retry-after-wait", "0", "--junit", junit});
    EXPECT_EQ(r.exit, kExitViolation) << r.err;
    std::ifstream in(junit);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::string fixed = junit_of("fixed-window");
  const size_t at = fixed.find("name=\"false-denials\"");
  ASSERT_NE(at, std::string::npos) << fixed;
  EXPECT_EQ(fixed.find("/>", at), fixed.find(">", at) - 1) << "judged, and passed: " << fixed;
  const std::string anchored = junit_of("anchored-window");
  const size_t skipped = anchored.find("name=\"false-denials\"");
  ASSERT_NE(skipped, std::string::npos) << anchored;
  EXPECT_EQ(anchored.find("<skipped message=\"not checked: an earlier admission can give this "
                          "model more room",
                          skipped),
            anchored.find("<skipped", skipped))
      << anchored;
}

TEST(ProbeCommand, WritesItsReportIntoADirectory) {
  AdmitsAll server;
  const std::string dir = ::testing::TempDir() + "/probe-report";
  fs::remove_all(dir);
  const CliOutcome r =
      Ratelab({"probe", server.url(), "--model", "fixed-window", "--limit", "2", "--window", "1m",
               "--traffic", "burst", "--burst-size", "5", "--max-rps", "200", "--out", dir});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.err.find("traffic burst: --burst-size requests at once"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/probe-report/report.html"), std::string::npos) << r.err;
  const auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::string md = read("report.md");
  // The checks that failed, named, as many as JUnit's failed cases.
  EXPECT_NE(md.find("**2 checks failed: aligned-window-cap (the promise) and linearizable.**"),
            std::string::npos)
      << md;
  const std::string junit = read("junit.xml");
  EXPECT_NE(junit.find("failures=\"2\""), std::string::npos) << junit;
  EXPECT_NE(read("report.html").find("<svg class=\"witness\""), std::string::npos);
  // The third admission in the window: no order explains it.
  EXPECT_NE(md.find("| linearizable | not linearizable ("), std::string::npos) << md;
  EXPECT_NE(md.find("<details><summary>linearizable, user probe-"), std::string::npos) << md;
  EXPECT_NE(md.find("| aligned-window-cap (fixed-window 2 per 1m per user) | broken for 1 user |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("<details><summary>aligned-window-cap, user probe-"), std::string::npos) << md;
  const std::string html = read("report.html");
  EXPECT_NE(html.find("<h2>Witnesses</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"bad\">broken for 1 user</td>"), std::string::npos) << html;
  EXPECT_EQ(nlohmann::json::parse(read("report.json"))["admitted"], 5);
  EXPECT_NE(read("junit.xml").find("<failure"), std::string::npos);
  EXPECT_NE(read(".ratelab-files").find("report.md"), std::string::npos);
  // `ratelab report` rebuilds every view from the JSON, byte for byte.
  const std::string again = ::testing::TempDir() + "/probe-report-again";
  fs::remove_all(again);
  const CliOutcome rebuilt = Ratelab({"report", dir + "/report.json", "--out", again});
  ASSERT_EQ(rebuilt.exit, kExitOk) << rebuilt.err;
  for (const char* name : {"report.html", "report.md", "report.json", "junit.xml"}) {
    std::ifstream in(again + "/" + name);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), read(name)) << name;
  }
  // The load's time is shown as such, and the whole probe's beside it when it took longer.
  nlohmann::json longer = nlohmann::json::parse(read("report.json"));
  longer["load_seconds"] = 5.0;
  longer["seconds"] = 10.5;
  longer["notes"] =
      nlohmann::json::array({{{"check", "retry-after-missing"},
                              {"summary", "3 of 9 answers: #6 a 429 without Retry-After"},
                              {"exchanges", nlohmann::json::array()}}});
  std::ofstream(again + "/longer.json") << longer.dump();
  ASSERT_EQ(Ratelab({"report", again + "/longer.json", "--out", again + "/longer"}).exit, kExitOk);
  std::ifstream longer_md(again + "/longer/report.md");
  const std::string shown((std::istreambuf_iterator<char>(longer_md)), {});
  EXPECT_NE(shown.find(" in 5.0 s (and "), std::string::npos) << shown;
  EXPECT_NE(shown.find(" to retry Retry-After; 10.5 s in all, judging included) |"),
            std::string::npos)
      << shown;
  // A note of an optional check is shown as one, saying how to make it a finding.
  EXPECT_NE(
      shown.find("| retry-after-missing | note: 3 of 9 answers: #6 a 429 without "
                 "Retry-After (optional: --require retry-after-missing makes it a finding) |"),
      std::string::npos)
      << shown;
  // A directory holding files ratelab did not write is refused before anything is sent.
  std::ofstream(dir + "/mine.txt") << "keep";
  const CliOutcome refused =
      Ratelab({"probe", server.url(), "--model", "fixed-window", "--out", dir});
  EXPECT_EQ(refused.exit, kExitBadInput) << refused.err;
  EXPECT_NE(refused.err.find("--out"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("probe: GET"), std::string::npos) << refused.err;
}

TEST(ProbeCommand, BadFlagsAreRefusedBeforeAnythingIsSent) {
  const auto refused = [](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "probe");
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("probe: GET"), std::string::npos) << "nothing is sent: " << r.err;
  };
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--max-requests", "0"},
          "--max-requests: 0 is not 1 to 1000000");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--max-rps", "50000"},
          "--max-rps: 50000 is not above 0 and at most 10000");
  refused({"https://127.0.0.1/", "--model", "fixed-window"}, "is HTTPS");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--require", "remaining"},
          "--require: unknown optional check 'remaining' (expected retry-after-missing)");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--header", "nocolon"},
          "--header: 'nocolon' is not a header");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--denied-if", "42"},
          "--denied-if: '42' is not an HTTP status");
  refused({"http://127.0.0.1:1/", "--model", "token-bucket", "--limit", "3"},
          "give --rate and --burst, not --limit and --window");
  refused({"http://127.0.0.1:1/", "--model", "leaky"}, "unknown algorithm 'leaky'");
  refused({"http://127.0.0.1:1/"}, "--model is required");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--traffic", "waves"},
          "--traffic: 'waves' is not a traffic (constant, poisson, boundary-attack or burst)");
  // One vocabulary with a scenario's traffic: a kind a probe does not send is named as such.
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--traffic", "diurnal"},
          "--traffic: 'diurnal' is not a traffic (constant, poisson, boundary-attack or burst)");
}

TEST(ProbeCommand, AServerThatIsNotThereIsAnErrorNotAPass) {
  const CliOutcome r = Ratelab({"probe", "http://127.0.0.1:1/", "--model", "fixed-window",
                                "--max-requests", "2", "--timeout", "2s"});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find("cannot connect to 127.0.0.1:1: connection refused"), std::string::npos)
      << r.err;
  // It stops at the first refusal, not after sending every request for the whole duration (which
  // would say its progress every second).
  const CliOutcome many = Ratelab({"probe", "http://127.0.0.1:1/", "--model", "fixed-window",
                                   "--max-requests", "500", "--max-rps", "50"});
  EXPECT_EQ(many.exit, kExitBadInput) << many.err;
  EXPECT_EQ(many.err.find("progress:"), std::string::npos) << many.err;
}

namespace fs = std::filesystem;

// testing/node/express-limiter (express-rate-limit in front of an Express route), started with
// `env` on a free loopback port, stopped at the end. Its packages come from its lock file
// (scripts/test installs them); without node or them the test fails under CI=true, else skips.
class ExpressApp {
 public:
  explicit ExpressApp(const std::vector<std::string>& env) {
    const fs::path app = fs::path(RATELAB_SOURCE_DIR) / "testing/node/express-limiter";
    const fs::path node = "/usr/bin/node";
    if (!fs::exists(node) || !fs::exists(app / "node_modules/express-rate-limit")) {
      missing_ = "node or the app's npm packages are missing (scripts/test installs them)";
      return;
    }
    dir_ = testing_files::TempDir("express-limiter");
    fs::create_directories(dir_);
    std::vector<std::string> environment = env;
    environment.push_back("PORT=0");
    environment.push_back("PATH=/usr/bin:/bin");
    pid_ = testing_process::Spawn({node.string(), (app / "app.js").string()},
                                  (dir_ / "out.txt").string(), (dir_ / "err.txt").string(),
                                  environment);
    // It says its port once it listens.
    for (int i = 0; i < 200 && port_ == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const std::string out = testing_files::Read(dir_ / "out.txt");
      if (const size_t at = out.find("listening on "); at != std::string::npos) {
        port_ = std::atoi(out.c_str() + at + 13);
      }
    }
  }
  ~ExpressApp() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  const std::string& missing() const { return missing_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hit"; }
  int port() const { return port_; }
  std::string log() const { return testing_files::Read(dir_ / "err.txt"); }

 private:
  std::string missing_;
  fs::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

#define RATELAB_START_EXPRESS(app, env)                        \
  ExpressApp app(env);                                         \
  if (!app.missing().empty()) {                                \
    if (std::getenv("CI") != nullptr) FAIL() << app.missing(); \
    GTEST_SKIP() << app.missing();                             \
  }                                                            \
  ASSERT_GT(app.port(), 0) << app.log()

// express-rate-limit's stores open each user's window at its first hit (a window of WINDOW_MS
// from then, on the app's clock or Redis's): held to the anchored window it keeps its promise.
// Held to 2 a window it is caught: where windows open is unknown, so the probe reports only
// what no two such windows allow (more than 2N in a span of W), and it admits 5 in one.
void ExpressKeepsItsAnchoredWindow(const ExpressApp& app) {
  const std::vector<std::string> probe = {"probe",          app.url(),
                                          "--header",       "X-User: {user}",
                                          "--model",        "anchored-window",
                                          "--window",       "1s",
                                          "--users",        "2",
                                          "--max-rps",      "100",
                                          "--max-requests", "150",
                                          "--duration",     "1500ms"};
  std::vector<std::string> kept = probe;
  kept.insert(kept.end(), {"--limit", "5"});
  CliOutcome r = Ratelab(kept);
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("anchored-window-cap (anchored-window 5 per 1s per user): kept"),
            std::string::npos)
      << r.out;
  // What was searched: the load, the policy and every check.
  EXPECT_NE(r.out.find(" user(s) over "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" s (anchored-window 5 per 1s per user; checks: anchored-window-cap "
                       "linearizable"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("nothing found in "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Retry-After retried"), std::string::npos) << r.out;
  std::vector<std::string> tighter = probe;
  tighter.insert(tighter.end(), {"--limit", "2", "--retry-after-wait", "0"});
  r = Ratelab(tighter);
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("[anchored-window-cap]"), std::string::npos) << r.out;
}

TEST(ProbeCommand, ExpressRateLimitWithItsMemoryStore) {
  for (const char* headers : {"draft-6", "draft-7", "draft-8"}) {
    RATELAB_START_EXPRESS(app, (std::vector<std::string>{"LIMIT=5", "WINDOW_MS=1000",
                                                         std::string("HEADERS=") + headers}));
    SCOPED_TRACE(headers);  // every draft's headers read by their own grammar
    ExpressKeepsItsAnchoredWindow(app);
  }
}

TEST(ProbeCommand, ExpressRateLimitWithRateLimitRedis) {
  RATELAB_START_REDIS(redis, RedisServerOptions{});
  RATELAB_START_EXPRESS(app,
                        (std::vector<std::string>{"LIMIT=5", "WINDOW_MS=1000", "STORE=redis",
                                                  "REDIS_SOCKET=" + redis->endpoint().unix_path}));
  ExpressKeepsItsAnchoredWindow(app);
}

}  // namespace
}  // namespace ratelab
