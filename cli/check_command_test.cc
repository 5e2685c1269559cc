// `ratelab check` finds each seed protocol's flaw with a small witness within a bounded number
// of seeds, and finds nothing in the correct protocols over hundreds of seeds with concurrency,
// node crashes and store restarts.
#include "cli/check_command.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "cli/cli_test_util.h"
#include "cli/ratelab_cli.h"
#include "testing/files.h"
#include "testing/process.h"

namespace ratelab {
namespace {

struct CheckFinding {
  std::string invariant;
  int64_t seeds = 0;
  size_t requests = 0;
  std::vector<std::string> faults;
  std::string summary;
  std::vector<std::string> outcomes;  // of the witness's requests
};

CheckFinding Check(std::vector<std::string> args) {
  args.insert(args.begin(), "check");
  args.push_back("--json");
  CliOutcome r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  if (r.exit != kExitViolation) return {};
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& v = j["violation"];
  CheckFinding f{
      v["invariant"], j["seeds_searched"], j["requests"].get<size_t>(), {}, v["summary"], {}};
  for (const nlohmann::json& fault : j["faults"]) f.faults.push_back(fault["what"]);
  for (const nlohmann::json& e : v["witness"]) f.outcomes.push_back(e["outcome"]);
  return f;
}

TEST(Check, TheHgetallHsetTokenBucketRacesTwoRequestsOneToken) {
  const CheckFinding f = Check({"kv-token-bucket-hgetall-hset", "--burst", "1", "--seeds", "20"});
  EXPECT_EQ(f.invariant, "bucket-conformance");
  EXPECT_EQ(f.requests, 2u) << "2 requests, 1 token: both succeed";
}

TEST(Check, ACrashBetweenIncrAndPexpireLeavesAnImmortalKey) {
  const CheckFinding f =
      Check({"kv-fixed-window-incr-pexpire", "--faults", "crash", "--seeds", "200"});
  EXPECT_EQ(f.invariant, "key-expiry");
  EXPECT_EQ(f.requests, 1u);
  ASSERT_EQ(f.faults.size(), 1u);
  EXPECT_NE(f.faults[0].find("crashed"), std::string::npos) << f.faults[0];
}

TEST(Check, TheZsetSlidingLogCountsDeniedRequests) {
  const CheckFinding f = Check({"kv-sliding-log-zset", "--limit", "1", "--seeds", "20"});
  EXPECT_EQ(f.invariant, "false-denials");
  EXPECT_LE(f.requests, 3u);  // admitted, denied (but logged), then falsely denied
}

TEST(Check, TheSlidingCounterCountsDeniedRequests) {
  const CheckFinding f = Check({"kv-sliding-counter", "--seeds", "20"});
  EXPECT_EQ(f.invariant, "false-denials");
  EXPECT_LE(f.requests, 4u);
}

TEST(Check, TheSeedsClaimFailsForEveryFixedWindowAtItsBoundary) {
  const CheckFinding f = Check(
      {"kv-fixed-window-lua", "--limit", "1", "--claim", "--faults", "none", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "any-window-cap");
  EXPECT_EQ(f.requests, 2u) << "limit 1: one request just before the edge, one just after";
}

TEST(Check, SeedZerosUpsertInsertsASecondDocumentOnceTheFirstIsFull) {
  const CheckFinding f =
      Check({"docs-fixed-window-upsert", "--limit", "1", "--faults", "none", "--seeds", "20"});
  EXPECT_EQ(f.invariant, "aligned-window-cap");
  EXPECT_EQ(f.requests, 2u) << "the first fills the document, the second upserts another";
}

TEST(Check, SeedZeroWithAUniqueIndexHoldsPerWindowButNotAcrossAnEdgeOrSkewedClocks) {
  CheckFinding f = Check({"docs-fixed-window-unique", "--limit", "1", "--claim", "--checks",
                          "promise", "--faults", "none", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "any-window-cap");
  EXPECT_EQ(f.requests, 2u);
  f = Check({"docs-fixed-window-unique", "--checks", "promise", "--faults", "clock-skew", "--seeds",
             "50"});
  EXPECT_EQ(f.invariant, "aligned-window-cap") << "app servers disagree on the minute";
  // No TTL in the MongoDB per-minute design: its documents stay forever.
  f = Check({"docs-fixed-window-unique", "--seeds", "5"});
  EXPECT_EQ(f.invariant, "key-expiry");
  EXPECT_NE(f.summary.find("no TTL index"), std::string::npos) << f.summary;
}

TEST(Check, SeedFoursCheckThenConsumeRacesTwoRequestsOneToken) {
  const CheckFinding f =
      Check({"docs-check-then-consume", "--limit", "1", "--checks", "promise", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "anchored-window-cap");
  EXPECT_EQ(f.requests, 2u);
  EXPECT_EQ(f.outcomes, (std::vector<std::string>{"admitted", "admitted"}));
}

TEST(Check, SeedFoursTtlIndexIsOnANumberSoNothingExpires) {
  const CheckFinding f =
      Check({"docs-check-then-consume", "--checks", "key-expiry", "--seeds", "5"});
  EXPECT_EQ(f.invariant, "key-expiry");
  EXPECT_EQ(f.requests, 1u);
  EXPECT_NE(f.summary.find("the TTL index is on 'timestamp', which holds a number, not a date"),
            std::string::npos)
      << f.summary;
}

TEST(Check, SurvivesRestartOnlyWhereTheStateIsKept) {
  // In process memory: a crash forgets the bucket.
  CheckFinding f = Check({"memory-gcra", "--checks", "survives-restart", "--nodes", "1", "--faults",
                          "crash", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "survives-restart");
  EXPECT_EQ(f.requests, 2u);
  // In a store without persistence: a store restart forgets the count.
  f = Check({"docs-fixed-window-retry", "--limit", "1", "--checks", "survives-restart",
             "--durability", "none", "--faults", "store-restart", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "survives-restart");
  EXPECT_NE(f.summary.find("across the restart: the store restarted"), std::string::npos);
  // With every write fsynced, neither crashes nor store restarts reset anything.
  for (const char* protocol : {"docs-fixed-window-retry", "kv-fixed-window-lua"}) {
    CliOutcome r = Ratelab(
        {"check", protocol, "--limit", "1", "--checks", "survives-restart", "--seeds", "300"});
    EXPECT_EQ(r.exit, kExitOk) << protocol << "\n" << r.out << r.err;
  }
}

TEST(Check, InProcessStateDoesNotSurviveARestart) {
  const CheckFinding f =
      Check({"memory-fixed-window", "--faults", "crash", "--nodes", "1", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "aligned-window-cap");
  ASSERT_EQ(f.faults.size(), 1u);
}

TEST(Check, CorrectProtocolsKeepTheirPromisesOverManySeeds) {
  // Windows from 10ms (shorter than a slow request's transit: keys must outlive it, and requests
  // overtake each other on the way to the store) to 1m.
  for (const char* protocol : {"kv-fixed-window-lua", "kv-sliding-log-lua"}) {
    for (const char* window : {"10ms", "1m"}) {
      CliOutcome r = Ratelab({"check", protocol, "--limit", "2", "--window", window, "--seeds",
                              "400", "--faults", "crash,store-restart,store-outage"});
      EXPECT_EQ(r.exit, kExitOk) << protocol << " per " << window << "\n" << r.out << r.err;
    }
  }
  for (const char* limit : {"1", "3"}) {
    CliOutcome r =
        Ratelab({"check", "docs-fixed-window-retry", "--limit", limit, "--seeds", "300", "--faults",
                 "crash,store-restart,store-outage", "--checks", "promise,false-denials"});
    EXPECT_EQ(r.exit, kExitOk) << "docs-fixed-window-retry limit " << limit << "\n"
                               << r.out << r.err;
  }
  for (const char* burst : {"1", "3"}) {
    CliOutcome r = Ratelab({"check", "kv-token-bucket-lua", "--burst", burst, "--rate", "2",
                            "--seeds", "400", "--faults", "crash,store-restart,store-outage"});
    EXPECT_EQ(r.exit, kExitOk) << "kv-token-bucket-lua burst " << burst << "\n" << r.out << r.err;
    for (const char* rate : {"2", "100"}) {
      r = Ratelab({"check", "kv-gcra-lua", "--burst", burst, "--rate", rate, "--seeds", "400",
                   "--faults", "crash,store-restart,store-outage"});
      EXPECT_EQ(r.exit, kExitOk) << "kv-gcra-lua burst " << burst << " rate " << rate << "\n"
                                 << r.out << r.err;
    }
  }
}

TEST(Check, ATtlOfTwiceTheFillTimeIsShorterThanATransitWhenTheBucketFillsFast) {
  // TTL twice the fill time (40ms here) runs on the store's clock: a request that spends longer
  // than that in transit, the key quiet meanwhile, finds a fresh, full bucket. The search's
  // delays reach three windows (60ms here), so the default seeds find it.
  std::vector<std::string> args = {
      "kv-token-bucket-lua", "--burst", "2", "--rate", "100", "--faults", "none"};
  CheckFinding f = Check(args);
  EXPECT_EQ(f.invariant, "bucket-conformance");
  // The two that empty the bucket and the delayed one.
  EXPECT_EQ(f.requests, 3u);
  args.push_back("--shrink-policy");
  f = Check(args);
  EXPECT_EQ(f.invariant, "bucket-conformance");
  EXPECT_EQ(f.requests, 2u);
}

const std::string kScripts = std::string(RATELAB_SOURCE_DIR) + "/property-tests/scripts/";

// The transit of witness request `id` in a check's JSON: from sent to its last step, in seconds.
double TransitOf(const nlohmann::json& check, int64_t id) {
  for (const nlohmann::json& e : check["violation"]["witness"]) {
    if (e["id"] == id) return e["steps"].back()["at_s"].get<double>() - e["invoke_s"].get<double>();
  }
  ADD_FAILURE() << "no request #" << id << " in the witness";
  return -1;
}

// The id the finding's condition names ("#3 reached it ...").
int64_t NamedRequest(const std::string& needs) {
  const size_t hash = needs.find('#');
  return hash == std::string::npos ? -1 : std::stoll(needs.substr(hash + 1));
}

// A sliding log on the client's clock whose TTL, refreshed at each admission, is exactly the
// window: a request held on its way past the key's expiry finds the log gone. The finding says
// so, names the request and how late it was, as the witness printed shows it; the shrink leaves
// the least transit it can (tens of milliseconds, the spread of the burst the log admitted, far
// under the 500ms the search allows); with --max-transit 0 nothing is found, and the line says
// what was searched.
TEST(Check, AFindingThatNeedsALateRequestSaysHowLateWithTheLeastTransitThatBreaksIt) {
  const std::vector<std::string> args = {
      "check",   "--lua-spec", kScripts + "sliding_log_zset_request_id.yaml",
      "--limit", "3",          "--window",
      "1s",      "--seeds",    "300"};
  std::vector<std::string> json = args;
  json.push_back("--json");
  CliOutcome r = Ratelab(json);
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["max_transit"], "500ms");
  const std::string needs = j["needs"];
  EXPECT_NE(needs.find("a request late to the store: #"), std::string::npos) << needs;
  EXPECT_NE(needs.find("up to 500ms"), std::string::npos) << needs;
  EXPECT_NE(needs.find("the flaw is real"), std::string::npos) << needs;
  EXPECT_NE(needs.find("a TTL of exactly the window"), std::string::npos) << needs;
  const double late = TransitOf(j, NamedRequest(needs));
  EXPECT_GT(late, 0.010) << needs;  // more than ordinary latency (at most 4ms a leg)
  EXPECT_LT(late, 0.150) << needs;  // the shrink brought it well under the bound
  // It says which key the late request found gone, when, and which request set its time to
  // live: the window, 1s, by an earlier request of the witness.
  const std::string key = j["violation"]["key"];
  const std::string gone = "; the key rl:" + key + " was gone, ";
  ASSERT_NE(needs.find(gone), std::string::npos) << needs;
  EXPECT_NE(needs.find("before: its time to live of 1s, set by #"), std::string::npos) << needs;
  const int64_t setter = std::stoll(needs.substr(needs.find(", set by #") + 10));
  EXPECT_LT(setter, NamedRequest(needs)) << needs;
  EXPECT_GT(TransitOf(j, setter), 0) << "the setter is a request of the witness";
  // The text says it too, under the summary.
  r = Ratelab(args);
  EXPECT_NE(r.out.find("\nneeds a request late to the store: #"), std::string::npos) << r.out;

  std::vector<std::string> none = args;
  none.insert(none.end(), {"--max-transit", "0"});
  r = Ratelab(none);
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("; transit up to 0s)"), std::string::npos) << r.out;
  none.push_back("--json");
  r = Ratelab(none);
  EXPECT_EQ(nlohmann::json::parse(r.out)["max_transit"], "0s") << r.out;
}

// A GCRA on the client's clock whose TTL is exactly its time to full: a finding that needs a
// request late by more than ordinary latency says so, and with no transit (and no faults) it
// keeps its promise. The bound given is replayed by the reproduce command.
TEST(Check, AGcraWhoseTtlIsItsTimeToFullNeedsTransitAndIsCleanWithout) {
  const std::vector<std::string> args = {
      "check",   "--lua-spec", kScripts + "gcra_client_clock_ttl_to_full.yaml",
      "--burst", "2",          "--rate",
      "10",      "--faults",   "none",
      "--seeds", "300",        "--json"};
  CliOutcome r = Ratelab(args);
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "bucket-conformance");
  const std::string needs = j["needs"];
  ASSERT_NE(needs.find("a request late to the store: #"), std::string::npos) << r.out;
  EXPECT_GT(TransitOf(j, NamedRequest(needs)), 0.004) << needs;

  std::vector<std::string> bounded = args;
  bounded.insert(bounded.end(), {"--max-transit", "0"});
  r = Ratelab(bounded);
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  bounded.back() = "250ms";
  r = Ratelab(bounded);
  if (r.exit == kExitViolation) {
    EXPECT_NE(
        nlohmann::json::parse(r.out)["reproduce"].get<std::string>().find(" --max-transit 250ms"),
        std::string::npos)
        << r.out;
  }
  bounded.back() = "2h";
  r = Ratelab(bounded);
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--max-transit: '2h' is over an hour"), std::string::npos) << r.err;
}

// The one request tried before a search runs with the policy given: a reply refused there is the
// reply the search would have got (a limit of 7, not 1).
TEST(Check, TheRequestTriedFirstRunsWithThePolicyGiven) {
  const fs::path dir = ::testing::TempDir() + "/tried-first";
  fs::create_directories(dir);
  testing_files::Write(dir, "short.lua", "return {tonumber(ARGV[1])}\n");
  const fs::path spec = testing_files::Write(
      dir, "short.yaml",
      "script: short.lua\nmodel: fixed-window\nargs: [\"{limit}\", \"{window_ms}\", "
      "\"{now_ms}\"]\nreply: [allowed, remaining]\n");
  const CliOutcome r =
      Ratelab({"check", "--lua-spec", spec.string(), "--limit", "7", "--seeds", "5"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("reply [(integer) 7] has no number for 'remaining'"), std::string::npos)
      << r.err;
}

// Every model is held to "no false denials" by default: a bucket that never admits is found.
TEST(Check, ABucketThatNeverAdmitsIsAFalseDenialByDefault) {
  const CheckFinding f = Check({"--lua-spec", kScripts + "token_bucket_denies_all.yaml", "--burst",
                                "3", "--rate", "2", "--seeds", "20"});
  EXPECT_EQ(f.invariant, "false-denials");
  EXPECT_EQ(f.requests, 1u);
}

// Each built-in protocol's flaw, within the default seeds at the policy it is found at, with a
// witness of at most three requests where three can show it.
TEST(Check, EveryBuiltInFlawIsFoundWithinTheDefaultSeeds) {
  struct Flaw {
    std::vector<std::string> args;
    std::string invariant;
    size_t most_requests;
  };
  const std::vector<Flaw> flaws = {
      {{"kv-fixed-window-incr-pexpire", "--faults", "crash"}, "key-expiry", 1},
      {{"kv-sliding-log-zset"}, "false-denials", 3},
      // Two admitted, one denied but counted, then one denied for it: N + 2 at the least.
      {{"kv-sliding-counter"}, "false-denials", 4},
      {{"kv-token-bucket-hgetall-hset"}, "bucket-conformance", 2},
      {{"kv-token-bucket-lua", "--burst", "2", "--rate", "100"}, "bucket-conformance", 3},
      {{"docs-fixed-window-upsert"}, "aligned-window-cap", 3},
      {{"docs-fixed-window-unique"}, "key-expiry", 1},
      {{"docs-check-then-consume"}, "anchored-window-cap", 3},
      {{"kv-fixed-window-lua", "--claim"}, "any-window-cap", 3},
      // N + 1 admitted across the failover, and one that loaded the script before it (without
      // it the lost admission's EVAL lands in the outage).
      {{"kv-fixed-window-lua", "--faults", "store-failover"}, "aligned-window-cap", 4},
      {{"kv-fixed-window-lua-wait", "--faults", "store-failover"}, "aligned-window-cap", 4},
  };
  for (const Flaw& flaw : flaws) {
    const CheckFinding f = Check(flaw.args);
    EXPECT_EQ(f.invariant, flaw.invariant) << flaw.args[0];
    EXPECT_LE(f.seeds, 200) << flaw.args[0];
    EXPECT_GE(f.requests, 1u) << flaw.args[0];
    EXPECT_LE(f.requests, flaw.most_requests) << flaw.args[0];
  }
}

// A failover to a replica that lags loses the counts it had not received: over-admission, the
// failover in the witness. Waiting for the replica after each admission leaves only the failover
// that falls between the script and its WAIT. Only MemoryKv models a replica.
TEST(Check, AFailoverToALaggingReplicaLosesCounts) {
  CheckFinding f = Check({"kv-fixed-window-lua", "--faults", "store-failover", "--seeds", "50"});
  EXPECT_EQ(f.invariant, "aligned-window-cap");
  ASSERT_EQ(f.faults.size(), 1u);
  EXPECT_NE(f.faults[0].find("the store failed over to its replica"), std::string::npos)
      << f.faults[0];
  EXPECT_LE(f.requests, 4u);
  f = Check({"kv-fixed-window-lua-wait", "--faults", "store-failover", "--seeds", "200"});
  EXPECT_EQ(f.invariant, "aligned-window-cap");
  CliOutcome r = Ratelab({"check", "kv-fixed-window-lua-wait", "--seeds", "100"});
  EXPECT_EQ(r.exit, kExitOk) << "without a failover its replica takes every admission\n"
                             << r.out << r.err;
  r = Ratelab({"check", "kv-fixed-window-lua", "--faults", "store-failover", "--store", "redis"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--faults store-failover needs --store memory"), std::string::npos) << r.err;
}

TEST(Check, TheWitnessKeepsThePolicyGivenUnlessAskedToShrinkIt) {
  // The fixed window's boundary burst at limit 3: 4 requests across an edge, at limit 3.
  std::vector<std::string> args = {
      "kv-fixed-window-lua", "--limit", "3", "--claim", "--faults", "none", "--seeds", "50"};
  CheckFinding f = Check(args);
  EXPECT_EQ(f.invariant, "any-window-cap");
  EXPECT_EQ(f.requests, 4u) << "N + 1 in a span shorter than the window";
  EXPECT_NE(f.summary.find("limit 3 per 10s"), std::string::npos) << f.summary;
  args.push_back("--shrink-policy");
  f = Check(args);
  EXPECT_EQ(f.requests, 2u) << "with the limit lowered to 1";
  EXPECT_NE(f.summary.find("limit 1 per 10s"), std::string::npos) << f.summary;
}

TEST(Check, TheSameSeedFindsTheSameWitness) {
  CliOutcome a = Ratelab({"check", "kv-sliding-log-zset", "--seed", "1"});
  CliOutcome b = Ratelab({"check", "kv-sliding-log-zset", "--seed", "1"});
  EXPECT_EQ(a.exit, kExitViolation);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("reproduce: ratelab check kv-sliding-log-zset --seed 1"), std::string::npos)
      << a.out;
}

TEST(Check, TheVirtualClockStartsWhereTheUserSays) {
  // By default at 2026-01-01T00:00:00Z, a realistic instant; --start moves it, and the reproduce
  // line keeps it.
  CliOutcome r = Ratelab({"check", "kv-sliding-log-zset", "--seed", "1", "--json"});
  ASSERT_EQ(r.exit, kExitViolation) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["witness"][0]["at"].get<std::string>().rfind("2026-01-01 00:00:", 0), 0u)
      << j["violation"]["witness"][0];
  r = Ratelab(
      {"check", "kv-sliding-log-zset", "--seed", "1", "--start", "2031-03-04T05:06:00Z", "--json"});
  ASSERT_EQ(r.exit, kExitViolation) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["witness"][0]["at"].get<std::string>().rfind("2031-03-04 05:06:", 0), 0u)
      << j["violation"]["witness"][0];
  EXPECT_NE(j["reproduce"].get<std::string>().find("--start 2031-03-04T05:06:00Z"),
            std::string::npos);
  // The whole witness: where its seconds count from, and every request's store steps and times.
  EXPECT_EQ(j["start"], "2031-03-04T05:06:00Z");
  for (const nlohmann::json& e : j["violation"]["witness"]) {
    ASSERT_FALSE(e["steps"].empty()) << e;
    EXPECT_GE(e["steps"][0]["at_s"].get<double>(), e["invoke_s"].get<double>()) << e;
    EXPECT_FALSE(e["steps"][0]["label"].get<std::string>().empty()) << e;
    if (!e["complete_s"].is_null()) {
      EXPECT_GE(e["complete_s"].get<double>(), e["steps"].back()["at_s"].get<double>()) << e;
    }
  }
}

TEST(Check, JunitHasACasePerCheckWithRealTimesAndTheReproduceCommand) {
  const std::string dir = ::testing::TempDir();
  const std::string found = dir + "/check-found.xml", none = dir + "/check-none.xml";
  ASSERT_EQ(
      Ratelab({"check", "kv-token-bucket-hgetall-hset", "--seeds", "20", "--junit", found}).exit,
      kExitViolation);
  std::string xml = testing_files::Read(found);
  // promise, false-denials (a bucket's too) and key-expiry
  EXPECT_NE(xml.find("<testsuite name=\"ratelab.check.kv-token-bucket-hgetall-hset\" tests=\"3\" "
                     "failures=\"1\" errors=\"0\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"check.kv-token-bucket-hgetall-hset\" name=\"promise\""),
            std::string::npos);
  EXPECT_NE(xml.find("step: HGETALL"), std::string::npos);  // the witness, steps and all
  EXPECT_NE(xml.find("reproduce: ratelab check kv-token-bucket-hgetall-hset --seed "),
            std::string::npos);

  // 300 seeds: long enough (9 ms here) that a real time is not 0.000 even on a faster machine,
  // where the run above, which stops at its first finding, can take under half a millisecond.
  ASSERT_EQ(Ratelab({"check", "memory-sliding-log", "--faults", "none", "--nodes", "1", "--seeds",
                     "300", "--junit", none})
                .exit,
            kExitOk);
  xml = testing_files::Read(none);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_EQ(xml.find("time=\"0.000\""), std::string::npos) << "a real time";
  EXPECT_EQ(xml.find("<failure"), std::string::npos);
  EXPECT_EQ(
      Ratelab({"check", "memory-sliding-log", "--seeds", "1", "--junit", "/nonexistent/x.xml"})
          .exit,
      kExitBadInput);
}

// `ratelab report` rebuilds a check's views from its JSON: the same JSON, the text view, and the
// JUnit file --junit wrote (but for the times, which the JSON does not hold).
TEST(Check, ItsJsonIsReadBackAndItsViewsRebuiltByReport) {
  const std::string dir = testing_files::TempDir("check-report").string();
  std::filesystem::create_directories(dir);
  const std::vector<std::string> args = {"check", "kv-token-bucket-hgetall-hset", "--seeds", "20"};
  std::vector<std::string> with_json = args;
  with_json.insert(with_json.end(), {"--json", "--junit", dir + "/junit.xml"});
  const CliOutcome json = Ratelab(with_json);
  ASSERT_EQ(json.exit, kExitViolation) << json.err;
  const CliOutcome text = Ratelab(args);
  const std::string views = dir + "/views";
  const CliOutcome rebuilt = Ratelab(
      {"report", testing_files::Write(dir, "check.json", json.out).string(), "--out", views});
  ASSERT_EQ(rebuilt.exit, kExitOk) << rebuilt.err;
  EXPECT_NE(rebuilt.out.find("ratelab report: check of kv-token-bucket-hgetall-hset"),
            std::string::npos)
      << rebuilt.out;
  EXPECT_EQ(nlohmann::json::parse(testing_files::Read(views + "/report.json")),
            nlohmann::json::parse(json.out));
  EXPECT_NE(testing_files::Read(views + "/report.md").find(text.out), std::string::npos);
  const std::regex times(R"(time="[0-9.]+")");
  EXPECT_EQ(std::regex_replace(testing_files::Read(views + "/junit.xml"), times, "time"),
            std::regex_replace(testing_files::Read(dir + "/junit.xml"), times, "time"));
}

TEST(Check, BadInputExitsTwoSayingWhatIsWrong) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", "no-such-protocol"}, "unknown protocol"},
      {{"check", "kv-gcra-lua", "--limit", "3"}, "give --rate and --burst"},
      {{"check", "kv-fixed-window-lua", "--rate", "3"}, "give --limit and --window"},
      {{"check", "kv-fixed-window-lua", "--window", "soon"}, "--window: 'soon' is not a positive"},
      {{"check", "kv-sliding-log-lua", "--window", "1500us"}, "whole milliseconds"},
      {{"check", "kv-fixed-window-lua", "--limit", "0"}, "limit"},
      {{"check", "kv-fixed-window-lua", "--faults", "crash,meteor"}, "unknown fault 'meteor'"},
      {{"check", "kv-fixed-window-lua", "--nodes", "0"}, "--nodes"},
      {{"check", "kv-gcra-lua", "--rate", "-1"}, "--rate"},
      // An interval that would not fit in nanoseconds (it wrapped into a wrong policy once).
      {{"check", "memory-token-bucket", "--rate", "0.000000000001"},
       "at least one token in 146 years"},
      {{"check", "kv-gcra-lua", "--checks", "promise,vibes"}, "unknown check 'vibes'"},
      {{"check", "kv-gcra-lua", "--durability", "sometimes"},
       "--durability: unknown durability 'sometimes'"},
      {{"check", "kv-gcra-lua", "--model", "gcra"}, "describe a --lua script"},
      {{"check"}, "name a protocol"},
      {{"check", "kv-gcra-lua", "--checks", ""}, "name at least one check"},
      {{"check", "kv-gcra-lua", "--start", "noon"},
       "--start: 'noon' is not a UTC instant (e.g. 2026-01-01T00:00:00Z)"},
      {{"check", "kv-gcra-lua", "--clock", "server"}, "describe a --lua script"},
      {{"check", "kv-gcra-lua", "--seeds", "-1"},
       "--seeds: '-1' is neither a number of seeds (N, for 1..N) nor a range"},
      {{"check", "kv-gcra-lua", "--seeds", "0"},
       "--seeds: '0' is neither a number of seeds (N, for 1..N) nor a range"},
      {{"check", "kv-gcra-lua", "--seed", "-1"},
       "--seed: '-1' is not a seed (a whole number from 0 to 18446744073709551615)"},
      {{"check", "kv-gcra-lua", "--seed", "18446744073709551616"}, "is not a seed"},
      // Sized before any work: a limit of a billion is never searched forever.
      {{"check", "kv-fixed-window-lua", "--limit", "1000000000"},
       "a limit (or burst) of 1000000000 makes each seed's case about 24000000002 requests, "
       "over --max-simulated 20000000"},
      {{"check", "kv-fixed-window-lua", "--limit", "1000", "--max-simulated", "1000"},
       "over --max-simulated 1000"},
      {{"check", "kv-fixed-window-lua", "--max-simulated", "0"},
       "--max-simulated: '0' is not a whole number of at least 1"},
      // The bound's old name is probe's bound on what it sends: refused with where it went.
      {{"check", "kv-fixed-window-lua", "--max-requests", "1000"},
       "--max-requests: this command simulates its requests; their bound is --max-simulated "
       "(--max-requests is probe's bound on the requests it sends)"},
      {{"check", "kv-gcra-lua", "--jobs", "0"}, "--jobs must be between 1 and 256, not 0"},
      {{"worst", "kv-fixed-window-lua", "--limit", "1000", "--max-simulated", "1000"},
       "over --max-simulated 1000"},
  };
  for (const auto& [args, expected] : cases) {
    CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << args[1] << " " << expected;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

// Every command that takes a policy holds a limiter to the same one when its flags are left out.
TEST(CheckCommand, EveryCommandHasTheOneDefaultPolicy) {
  for (const char* command : {"check", "worst", "stress", "probe"}) {
    const CliOutcome help = Ratelab({command, "--help"});
    EXPECT_NE(help.out.find("N per window (default 2)"), std::string::npos) << command;
    EXPECT_NE(help.out.find("W, e.g. 10s, 1m, 500ms (default 10s)"), std::string::npos) << command;
    EXPECT_NE(help.out.find("tokens per second (default 1)"), std::string::npos) << command;
    EXPECT_NE(help.out.find("capacity (default 1)"), std::string::npos) << command;
  }
  // And it is the policy a run is held to: check's reproduce line and JSON name it.
  const CliOutcome check = Ratelab({"check", "memory-fixed-window", "--seeds", "1", "--json"});
  EXPECT_NE(check.out.find("2 per 10s"), std::string::npos) << check.out;
}

// Seeds searched side by side print what one at a time prints, byte for byte: here a flaw 162
// seeds in, after many seeds taken by each thread, and a search that finds nothing.
TEST(CheckCommand, SeedsSearchedSideBySideSayWhatOneAtATimeSays) {
  const std::vector<std::vector<std::string>> searches = {
      {"check", "kv-fixed-window-lua-wait", "--faults", "store-failover", "--seeds", "146..1000",
       "--json"},
      {"check", "kv-gcra-lua", "--seeds", "1..300"},
  };
  for (const std::vector<std::string>& search : searches) {
    std::vector<std::string> one = search, two = search;
    one.insert(one.end(), {"--jobs", "1"});
    two.insert(two.end(), {"--jobs", "2"});
    const CliOutcome a = Ratelab(one), b = Ratelab(two);
    EXPECT_EQ(a.exit, search[1] == "kv-gcra-lua" ? kExitOk : kExitViolation) << a.err;
    EXPECT_EQ(b.exit, a.exit) << b.err;
    EXPECT_EQ(b.out, a.out);
  }
}

// The shards of a search search its seeds between them, and the lowest seed any of them finds
// is the one the whole search finds.
TEST(CheckCommand, TheShardsOfASearchFindWhatTheWholeSearchFinds) {
  const auto found_at = [](const CliOutcome& r) {
    const nlohmann::json j = nlohmann::json::parse(r.out);
    return j["verdict"] == "violation" ? j["seed"].get<uint64_t>() : UINT64_MAX;
  };
  const CliOutcome whole = Ratelab({"check", "kv-sliding-log-zset", "--seeds", "1..30", "--json"});
  ASSERT_EQ(whole.exit, kExitViolation) << whole.err;
  uint64_t lowest = UINT64_MAX;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    const CliOutcome r =
        Ratelab({"check", "kv-sliding-log-zset", "--seeds", "1..30", "--shard", shard, "--json"});
    EXPECT_NE(r.err.find(std::string("(shard ") + shard + " of 1..30)"), std::string::npos)
        << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["shard"], shard);
    lowest = std::min(lowest, found_at(r));
  }
  EXPECT_EQ(lowest, found_at(whole));
  // A shard that finds nothing searched its own seeds only: every third of 1..9.
  const CliOutcome kept =
      Ratelab({"check", "kv-fixed-window-lua", "--seeds", "1..9", "--shard", "2/3", "--json"});
  EXPECT_EQ(kept.exit, kExitOk) << kept.err;
  EXPECT_EQ(nlohmann::json::parse(kept.out)["seeds_searched"], 3);
  const CliOutcome both =
      Ratelab({"check", "kv-fixed-window-lua", "--seed", "4", "--shard", "2/3"});
  EXPECT_EQ(both.exit, kExitBadInput);
  EXPECT_NE(both.err.find("--seed excludes --shard"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// SIGTERM while a slow script runs ends `check` within a second, saying it was interrupted, with
// no finding from the run it cut short: the script ends at its next look at its budget. (A seed
// of slow scripts ran on to its end before; a script that caught its budget's error ran for
// ever, and the first SIGTERM was taken as a graceful stop and ignored.)
TEST(Check, SigtermDuringASlowScriptEndsTheRunWithinASecond) {
  const fs::path dir = testing_files::TempDir("check-sigterm");
  // The example's fixed window, each call after a few hundred thousand instructions of busy
  // work.
  testing_files::Write(
      dir, "slow.lua",
      "local n = 0 for i = 1, 5000000 do n = n + i end\n" +
          testing_files::Read(fs::path(RATELAB_SOURCE_DIR) / "examples/my_limiter.lua"));
  testing_files::Write(dir, "slow.yaml",
                       "script: slow.lua\nmodel: fixed-window\nkeys: [\"rl:{{{key}}}\"]\n"
                       "args: [\"{limit}\", \"{window_ms}\", \"{now_ms}\"]\n"
                       "reply: [allowed, remaining]\n");
  const fs::path out = dir / "out.txt", err = dir / "err.txt";
  const pid_t pid = testing_process::Spawn(
      {RATELAB_BINARY, "check", "--lua-spec", (dir / "slow.yaml").string(), "--limit", "5",
       "--window", "1m", "--seeds", "1..100000", "--junit", (dir / "junit.xml").string()},
      out.string(), err.string());
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // in the middle of a seed
  const auto signalled = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0 &&
         std::chrono::steady_clock::now() - signalled < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const auto took = std::chrono::steady_clock::now() - signalled;
  if (took >= std::chrono::seconds(30)) kill(pid, SIGKILL);
  const std::string said = testing_files::Read(err);
  ASSERT_TRUE(WIFEXITED(status)) << said;
  EXPECT_EQ(WEXITSTATUS(status), kExitInterrupted) << said;
  EXPECT_LT(took, std::chrono::seconds(1)) << said;
  EXPECT_NE(said.find("interrupted: nothing found in the "), std::string::npos) << said;
  EXPECT_EQ(said.find("script stopped"), std::string::npos) << said;
  // CI learns the search did not run through: each check skipped, with why; none passed.
  const std::string junit = testing_files::Read(dir / "junit.xml");
  EXPECT_NE(junit.find("skipped=\"3\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("<skipped message=\"interrupted after "), std::string::npos) << junit;
  EXPECT_NE(junit.find(" of 100000 seed(s), nothing found in those"), std::string::npos) << junit;
}

// A shard's progress counts its own seeds, not the range's.
TEST(Check, AShardsProgressCountsItsOwnSeeds) {
  const CliOutcome r =
      Ratelab({"check", "kv-token-bucket-lua", "--seeds", "1..400", "--shard", "2/4"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.err.find("progress: 50/100 seeds (seed 198), nothing yet"), std::string::npos)
      << r.err;
}

// --out writes a page a reviewer reads: the verdict, the witness drawn and tabled, what was
// searched and the command that replays it; beside it the Markdown, JSON and JUnit.
TEST(Check, OutWritesAPageWithTheVerdictTheWitnessDrawnAndWhatWasSearched) {
  const fs::path dir = testing_files::TempDir("check-out");
  const CliOutcome r =
      Ratelab({"check", "kv-sliding-counter", "--seeds", "50", "--out", (dir / "report").string()});
  ASSERT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.err.find("report: " + (dir / "report" / "report.html").string()), std::string::npos)
      << r.err;
  const std::string html = testing_files::Read(dir / "report" / "report.html");
  EXPECT_NE(html.find("<p class=\"verdict bad\"><b>VIOLATION of "), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"witness\""), std::string::npos);
  EXPECT_NE(html.find("class=\"timeline\""), std::string::npos);
  EXPECT_NE(html.find("<h2>What was searched</h2>"), std::string::npos);
  EXPECT_NE(html.find("ratelab check kv-sliding-counter --seed "), std::string::npos);
  for (const char* file : {"report.md", "report.json", "junit.xml"}) {
    EXPECT_TRUE(fs::exists(dir / "report" / file)) << file;
  }
  // Nothing found is a page too, saying what was searched.
  const CliOutcome clean =
      Ratelab({"check", "kv-token-bucket-lua", "--seeds", "5", "--out", (dir / "clean").string()});
  ASSERT_EQ(clean.exit, kExitOk) << clean.err;
  const std::string page = testing_files::Read(dir / "clean" / "report.html");
  EXPECT_NE(page.find("<p class=\"verdict good\"><b>Nothing found in 5 seed(s)"),
            std::string::npos);
  EXPECT_EQ(page.find("<svg class=\"witness\""), std::string::npos);
  EXPECT_NE(page.find("<td>faults drawn</td>"), std::string::npos);
}

}  // namespace
}  // namespace ratelab
