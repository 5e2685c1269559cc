// check --exec: a user's own limiter, in any language, as a process on the virtual clock
// (docs/exec-protocol.md), through each adapter ratelab ships.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "cli/cli_test_util.h"
#include "testing/files.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

std::string Adapter(const std::string& path) {
  return std::string(RATELAB_SOURCE_DIR) + "/adapters/" + path;
}

struct Shipped {
  std::string command;
  std::string model;
  std::string name;  // as its hello gives it
};

// Each adapter, with the model its library is held to (adapters/README.md argues each).
const Shipped kShipped[] = {
    {Adapter("python/limits_adapter.py"), "sliding-log-closed", "limits 2.8.0"},
    {Adapter("python/limits_adapter.py"), "anchored-window-half-open", "limits 2.8.0"},
    {Adapter("node/adapter.js") + " rate-limiter-flexible", "anchored-window",
     "rate-limiter-flexible 11.4.0"},
    {Adapter("node/adapter.js") + " limiter", "token-bucket", "limiter 4.1.0"},
    {Adapter("go/xrate"), "token-bucket", "golang.org/x/time/rate"},
    {Adapter("java/guava-ratelimiter"), "token-bucket", "guava 31.1"},
    {Adapter("awk/fixed-window"), "fixed-window", "awk fixed window"},
};

TEST(ExecCheck, EachShippedAdapterKeepsItsModelAndARestartForgetsItsCounts) {
  for (const Shipped& a : kShipped) {
    const CliOutcome kept =
        Ratelab({"check", "--exec", a.command, "--model", a.model, "--seeds", "1..60"});
    EXPECT_EQ(kept.exit, kExitOk) << a.command << "\n" << kept.out << kept.err;
    EXPECT_TRUE(absl::StrContains(kept.out, "exec:" + a.name)) << kept.out;
    EXPECT_TRUE(absl::StrContains(kept.out, "nothing found in 60 seed(s)")) << kept.out;
    EXPECT_TRUE(absl::StrContains(kept.err, "note: no faults by default for --exec")) << kept.err;
    // A crash restarts the process's limiter: what it counted is gone, so it admits too many.
    const CliOutcome crashed =
        Ratelab({"check", "--exec", a.command, "--model", a.model, "--faults", "crash"});
    EXPECT_EQ(crashed.exit, kExitViolation) << a.command << "\n" << crashed.out << crashed.err;
    EXPECT_TRUE(absl::StrContains(crashed.out, "crashed at")) << crashed.out;
    EXPECT_TRUE(absl::StrContains(crashed.out, "--seed 1 --faults crash")) << crashed.out;
  }
}

TEST(ExecCheck, TheAwkToyCountsWindowsNumberedPastTwoToThe31st) {
  // Windows of 250 ms are numbered past 2^31: awk writes such a number "7.0689e+09" unless told
  // otherwise, and neighbouring windows shared a count. ratelab found it in the toy, as false
  // denials at seed 1.
  const CliOutcome o =
      Ratelab({"check", "--exec", Adapter("awk/fixed-window"), "--model", "fixed-window", "--limit",
               "4", "--window", "250ms", "--seeds", "1..20"});
  EXPECT_EQ(o.exit, kExitOk) << o.out << o.err;
}

TEST(ExecCheck, ADocumentedBehaviourIsReportedAsWhatItIs) {
  // limits' elastic expiry moves the window on with every hit, denied ones too: it denies where
  // a window opened by the first request would have room.
  const CliOutcome elastic =
      Ratelab({"check", "--exec",
               Adapter("python/limits_adapter.py") + " --strategy fixed-window-elastic-expiry",
               "--model", "anchored-window"});
  EXPECT_EQ(elastic.exit, kExitViolation) << elastic.out << elastic.err;
  EXPECT_TRUE(absl::StrContains(elastic.out, "VIOLATION of false-denials")) << elastic.out;
  EXPECT_TRUE(absl::StrContains(elastic.out, "had room")) << elastic.out;
  // A new Guava RateLimiter stores no permits: a key's first burst gets one request.
  const CliOutcome cold =
      Ratelab({"check", "--exec", Adapter("java/guava-ratelimiter"), "--model", "token-bucket",
               "--burst", "4", "--rate", "4", "--checks", "promise,false-denials"});
  EXPECT_EQ(cold.exit, kExitViolation) << cold.out << cold.err;
  EXPECT_TRUE(absl::StrContains(cold.out, "VIOLATION of false-denials")) << cold.out;
  EXPECT_TRUE(absl::StrContains(cold.out, "(3 left before this request of cost 1)")) << cold.out;
  // Held to a window it does not keep, the plain fixed window of limits is caught too.
  const CliOutcome wrong_model = Ratelab({"check", "--exec", Adapter("python/limits_adapter.py"),
                                          "--model", "sliding-log-closed", "--strategy"});
  EXPECT_EQ(wrong_model.exit, kExitBadInput);
}

TEST(ExecCheck, GuavaAdmitsAnyCostOnCreditAsTheModelOfItsContractSays) {
  // A key's first request at 0s (Guava's cold start: no permits stored, the next free at 1s);
  // at 3s one of cost 5, admitted on the one token there, 4 owed; denied at 3.5s and 6.9s while
  // the debt is waited off, admitted at 7.1s and 8.05s.
  const fs::path dir = testing_files::TempDir("exec-credit");
  fs::create_directories(dir);
  testing_files::Write(dir, "costs.csv",
                       "timestamp,key,endpoint,cost\n1700000000.000,u,/api,1\n"
                       "1700000003.000,u,/api,5\n1700000003.500,u,/api,1\n"
                       "1700000006.900,u,/api,1\n1700000007.100,u,/api,1\n"
                       "1700000008.050,u,/api,1\n");
  const std::string guava =
      "burst: 2, interval: 1s, exec: " + Adapter("java/guava-ratelimiter") + ", name: ";
  const std::string file =
      testing_files::Write(dir, "credit.yaml",
                           "name: credit\nnodes: 1\nlimiters:\n"
                           "  - {algorithm: token-bucket-credit, " +
                               guava +
                               "credit}\n"
                               "  - {algorithm: token-bucket, " +
                               guava +
                               "whole}\n"
                               "  - {algorithm: token-bucket-credit, burst: 2, interval: 1s}\n"
                               "claim: {limit: 20, window: 10s}\n"
                               "traffic:\n  - {type: replay, file: costs.csv, format: csv}\n"
                               "checks: [promise, false-denials]\n")
          .string();
  const CliOutcome o = Ratelab({"run", file, "--json"});
  EXPECT_EQ(o.exit, kExitViolation) << o.out << o.err;
  const nlohmann::json limiters = nlohmann::json::parse(o.out)["limiters"];
  ASSERT_EQ(limiters.size(), 3u) << o.out;
  for (const nlohmann::json& l : limiters) {
    EXPECT_EQ(l["admitted"], 4) << l;
    // Held to its contract, Guava keeps it; held to a bucket that wants the whole cost, the
    // request of cost 5 breaks it.
    const bool whole = l["name"] == "whole";
    EXPECT_EQ(l["violations"].size(), whole ? 1u : 0u) << l;
    if (whole) {
      EXPECT_EQ(l["violations"][0]["invariant"], "bucket-conformance") << l;
    }
  }
}

TEST(ExecCheck, AProcessThatFailsIsAFailedRunWithItsStderrTheRequestAndTheSeed) {
  const std::string dies =
      "sh -c 'while read -r line; do id=$(echo \"$line\" | sed "
      "\"s/.*\\\"id\\\":\\([0-9]*\\).*/\\1/\"); "
      "case \"$line\" in *hello*) echo \"{\\\"id\\\":$id,\\\"version\\\":1}\";; *decide*) "
      "echo \"panic: index out of range\" >&2; exit 2;; *) echo \"{\\\"id\\\":$id}\";; esac; done'";
  const std::string junit = (testing_files::TempDir("junit") += ".xml").string();
  const Said said = SayBoth({"check", "--exec", dies, "--model", "fixed-window"}, junit);
  EXPECT_EQ(said.exit, kExitLimiterFailed) << said.text;
  EXPECT_TRUE(absl::StrContains(said.text, "FAILED (seed 1")) << said.text;
  EXPECT_TRUE(absl::StrContains(said.text, "it exited with status 2")) << said.text;
  EXPECT_TRUE(absl::StrContains(said.text, "panic: index out of range")) << said.text;
  EXPECT_TRUE(absl::StrContains(said.text, "while deciding key user:")) << said.text;
  EXPECT_TRUE(absl::StrContains(said.text, "reproduce: ratelab check --exec")) << said.text;
  const nlohmann::json j = nlohmann::json::parse(said.json, nullptr, false);
  EXPECT_EQ(j.is_object() ? j.value("verdict", "") : "", "failure") << said.json;
  EXPECT_NE(said.junit.find("<error type=\"decides without failing\""), std::string::npos)
      << said.junit;
  // One that cannot start is bad input; one that starts and cannot greet, a failed limiter.
  EXPECT_EQ(Ratelab({"check", "--exec", "no-such-adapter", "--model", "fixed-window"}).exit,
            kExitBadInput);
  const CliOutcome mute = Ratelab({"check", "--exec", "sh -c 'exec sleep 5'", "--exec-timeout",
                                   "200ms", "--model", "fixed-window"});
  EXPECT_EQ(mute.exit, kExitLimiterFailed) << mute.err;
  EXPECT_TRUE(absl::StrContains(mute.err, "did not answer its hello: answered nothing for 200 ms"))
      << mute.err;
}

TEST(ExecCheck, AScenarioLimiterIsAProcessRunInTheScenarioFilesDirectory) {
  const fs::path dir = testing_files::TempDir("exec-scenario");
  fs::create_directories(dir);
  for (const char* file : {"fixed-window", "fixed_window.awk"}) {
    fs::copy_file(Adapter(std::string("awk/") + file), dir / file);
  }
  const std::string limiter = "{algorithm: fixed-window, limit: 5, window: 1s, exec: ";
  const auto scenario = [&](const std::string& mine) {
    return testing_files::Write(
               dir, "mine.yaml",
               "name: mine\nnodes: 1\nlimiters:\n  - " + mine +
                   "\n  - {algorithm: fixed-window, limit: 5, window: 1s}\n"
                   "claim: {limit: 10, window: 1s}\ntraffic:\n"
                   "  - {type: zipf-users, users: 5, exponent: 0, duration: 20s, mean_gap: 50ms}\n"
                   "checks: [promise, false-denials]\n")
        .string();
  };
  // The awk toy decides as ratelab's own fixed window: the same admissions, run after run.
  const std::string file = scenario(limiter + "./fixed-window, name: mine}");
  const CliOutcome one = Ratelab({"run", file, "--json"});
  ASSERT_EQ(one.exit, kExitOk) << one.out << one.err;
  const nlohmann::json results = nlohmann::json::parse(one.out)["limiters"];
  ASSERT_EQ(results.size(), 2u) << one.out;
  EXPECT_EQ(results[0]["name"], "mine");
  EXPECT_EQ(results[0]["admitted"], results[1]["admitted"]) << one.out;
  EXPECT_GT(results[0]["admitted"].get<int64_t>(), 100) << one.out;
  // Seeds on two threads share the one process, and find what one thread finds.
  const CliOutcome serial = Ratelab({"run", file, "--seeds", "1..20", "--json"});
  const CliOutcome parallel = Ratelab({"run", file, "--seeds", "1..20", "--jobs", "2", "--json"});
  EXPECT_EQ(serial.exit, kExitOk) << serial.err;
  EXPECT_EQ(serial.out, parallel.out);
  EXPECT_EQ(Ratelab({"compare", file, "--out", (dir / "report").string()}).exit, kExitOk);
  // Not both a protocol and a process; a command that cannot start is named at its line.
  const CliOutcome both =
      Ratelab({"run", scenario(limiter + "./fixed-window, protocol: memory-fixed-window}")});
  EXPECT_EQ(both.exit, kExitBadInput);
  EXPECT_TRUE(absl::StrContains(both.err, "mine.yaml:4:")) << both.err;
  EXPECT_TRUE(absl::StrContains(both.err, "a protocol or a process ('exec'), not both"))
      << both.err;
  const CliOutcome storeless =
      Ratelab({"run", scenario(limiter + "./fixed-window, on_store_error: fail-open}")});
  EXPECT_EQ(storeless.exit, kExitBadInput);
  EXPECT_TRUE(absl::StrContains(storeless.err, "it takes no 'on_store_error'")) << storeless.err;
  const CliOutcome missing = Ratelab({"run", scenario(limiter + "./no-such-adapter}")});
  EXPECT_EQ(missing.exit, kExitBadInput);
  EXPECT_TRUE(absl::StrContains(missing.err, "'./no-such-adapter' could not be started"))
      << missing.err;
}

TEST(ExecCheck, StressCallsTheOneLimiterOfAProcessFromEveryThread) {
  const CliOutcome o =
      Ratelab({"stress", "--exec", Adapter("go/xrate"), "--model", "token-bucket", "--burst", "5",
               "--rate", "100", "--threads", "4", "--duration", "1s", "--users", "2", "--json"});
  ASSERT_EQ(o.exit, kExitOk) << o.out << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["store"], "process");
  EXPECT_EQ(j["linearizability"]["verdict"], "linearizable") << o.out;
  EXPECT_TRUE(j["violations"].empty()) << o.out;
  // One limiter, not one a thread: 2 keys get no more than a bucket each over the second.
  EXPECT_LE(j["admitted"].get<int64_t>(), 2 * (5 + 100 + 10)) << o.out;
  EXPECT_GT(j["admitted"].get<int64_t>(), 2 * 50) << o.out;
}

// rate-limiter-flexible reads Date.now(): its window ends on a whole millisecond and the next
// opens on that tick, where the anchored model's closed window still holds it. check forgives
// that tie at 1 ms; stress gives it the same benefit (it said "not linearizable" in most 2 s
// runs before).
TEST(ExecCheck, StressForgivesTheTieAtTheLimitersMillisecondAsCheckDoes) {
  for (int run = 0; run < 2; ++run) {
    const CliOutcome o =
        Ratelab({"stress", "--exec", Adapter("node/adapter.js") + " rate-limiter-flexible",
                 "--model", "anchored-window", "--limit", "5", "--window", "100ms", "--threads",
                 "4", "--duration", "2s", "--json"});
    ASSERT_EQ(o.exit, kExitOk) << o.out << o.err;
    const nlohmann::json j = nlohmann::json::parse(o.out);
    EXPECT_EQ(j["linearizability"]["verdict"], "linearizable") << o.out;
    EXPECT_TRUE(j["violations"].empty()) << o.out;
  }
  // Its text says what was searched, as check's does.
  const CliOutcome text =
      Ratelab({"stress", "--exec", Adapter("node/adapter.js") + " rate-limiter-flexible", "--model",
               "anchored-window", "--limit", "5", "--window", "100ms", "--threads", "2",
               "--duration", "500ms"});
  EXPECT_NE(text.out.find(" request(s) from 2 thread(s), 1 user(s), "), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("(anchored-window 5 per 100ms; checks: anchored-window-cap linearizable"),
            std::string::npos)
      << text.out;
}

// A limiter that admits its first few requests and then nothing: whatever the linearizability
// search decides (past its budget, on a fast library, it says "unknown"), a denial the model had
// room for wherever every request fell is a false denial, and stress exits 1.
TEST(ExecCheck, StressFindsADenialNoOrderExplainsWhateverTheSearchDecides) {
  const fs::path dir = ::testing::TempDir() + "/first-five";
  fs::create_directories(dir);
  const fs::path toy = testing_files::Write(
      dir, "first-five.sh",
      "#!/bin/sh\n"
      "# Admits the first 5 requests it is asked about, then denies every one.\n"
      "n=0\n"
      "while read -r line; do\n"
      "  id=$(echo \"$line\" | sed 's/.*\"id\":\\([0-9]*\\).*/\\1/')\n"
      "  case \"$line\" in\n"
      "    *hello*) echo \"{\\\"id\\\":$id,\\\"version\\\":1,\\\"name\\\":\\\"first five\\\"}\";;\n"
      "    *decide*) n=$((n+1)); if [ $n -le 5 ]; then a=true; else a=false; fi;\n"
      "      echo \"{\\\"id\\\":$id,\\\"allowed\\\":$a}\";;\n"
      "    *) echo \"{\\\"id\\\":$id}\";;\n"
      "  esac\n"
      "done\n");
  fs::permissions(toy, fs::perms::owner_all);
  const CliOutcome o =
      Ratelab({"stress", "--exec", toy.string(), "--model", "fixed-window", "--limit", "5",
               "--window", "100ms", "--threads", "2", "--duration", "1s", "--json"});
  EXPECT_EQ(o.exit, kExitViolation) << o.out << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  bool found = false;
  for (const nlohmann::json& v : j["violations"]) found |= v["check"] == "false-denials";
  EXPECT_TRUE(found) << o.out;
}

TEST(ExecCheck, TheFlagsThatDoNotGoWithExecAreRefused) {
  const struct {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"check", "--exec", "x", "--lua", "y.lua", "--model", "fixed-window"},
       "give one of a protocol, --lua and --exec"},
      {{"check", "memory-fixed-window", "--exec", "x", "--model", "fixed-window"},
       "give one of a protocol, --lua and --exec"},
      {{"check", "--exec", "x"}, "--exec needs --model"},
      {{"check", "--exec", "x", "--model", "fixed-window", "--keys", "k"},
       "describe a --lua script"},
      {{"check", "memory-fixed-window", "--exec-timeout", "1s"}, "--exec-timeout is for --exec"},
      {{"stress", "--exec", Adapter("go/xrate"), "--model", "token-bucket", "--store", "redis"},
       "keeps its state in its own process"},
      // A policy the library cannot express, before any search.
      {{"check", "--exec", Adapter("python/limits_adapter.py"), "--model", "token-bucket"},
       "refused the policy: limits has no token-bucket"},
      {{"worst", "--exec", Adapter("python/limits_adapter.py"), "--model", "token-bucket"},
       "refused the policy: limits has no token-bucket"},
  };
  for (const auto& c : cases) {
    const CliOutcome o = Ratelab(c.args);
    EXPECT_EQ(o.exit, kExitBadInput) << c.says;
    EXPECT_TRUE(absl::StrContains(o.err, c.says)) << o.err;
  }
}

}  // namespace
}  // namespace ratelab
