// `ratelab worst`: the worst found at each concurrency, as text with a table and as JSON, the
// same bytes for the same options, and clear errors for what it cannot do.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"
#include "cli/exit_codes.h"
#include "testing/files.h"

namespace ratelab {
namespace {

TEST(WorstCommand, PrintsTheWorstAtEachConcurrencyWithAWitnessAndTheCommandAgain) {
  const CliOutcome r = Ratelab(
      {"worst", "kv-token-bucket-hgetall-hset", "--concurrency", "1,2", "--runs", "800", "--json"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["claim"], "over-bucket");
  EXPECT_EQ(j["bound"], "at most 1 + floor(span / 1s) in any span");
  EXPECT_EQ(j["max_transit"], "500ms") << "the transit it searched under";
  ASSERT_EQ(j["searches"].size(), 2u);
  EXPECT_EQ(j["searches"][0]["value"], 0) << "one request at a time: no race";
  EXPECT_TRUE(j["searches"][0]["witness"].is_null());
  const nlohmann::json& two = j["searches"][1];
  EXPECT_GT(two["value"], 0);
  EXPECT_GT(two["amplification"], 1.0);
  EXPECT_LE(two["amplification"], 2.0) << "each token spent at most twice";
  EXPECT_EQ(two["witness"]["invariant"], "over-bucket");
  EXPECT_EQ(two["reproduce"],
            "ratelab worst kv-token-bucket-hgetall-hset --concurrency 2 --runs 800");
  EXPECT_NE(r.err.find("concurrency 2: " + two["runs"].dump() + " runs in"), std::string::npos)
      << r.err;
  EXPECT_LE(two["runs"], 800);

  const CliOutcome text =
      Ratelab({"worst", "kv-token-bucket-hgetall-hset", "--concurrency", "1,2", "--runs", "800"});
  EXPECT_NE(text.out.find("concurrency  worst  amplification\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("its bound held in every case tried"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" (over-bucket; transit up to 500ms)\n"), std::string::npos) << text.out;
  const CliOutcome bounded = Ratelab({"worst", "kv-token-bucket-hgetall-hset", "--concurrency", "2",
                                      "--runs", "200", "--max-transit", "20ms", "--json"});
  ASSERT_EQ(bounded.exit, kExitOk) << bounded.err;
  const nlohmann::json b = nlohmann::json::parse(bounded.out);
  EXPECT_EQ(b["max_transit"], "20ms");
  EXPECT_EQ(b["searches"][0]["reproduce"],
            "ratelab worst kv-token-bucket-hgetall-hset --concurrency 2 --runs 200 --max-transit "
            "20ms");
  EXPECT_EQ(text.out, Ratelab({"worst", "kv-token-bucket-hgetall-hset", "--concurrency", "1,2",
                               "--runs", "800"})
                          .out)
      << "the same options, the same bytes";
}

TEST(WorstCommand, ItsJsonIsReadBackAndItsViewsRebuiltByReport) {
  const CliOutcome r = Ratelab({"worst", "memory-fixed-window", "--limit", "3", "--concurrency",
                                "1,2", "--runs", "300", "--json"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  const std::string dir = testing_files::TempDir("worst-report").string();
  const std::string json = testing_files::Write(dir, "worst.json", r.out).string();
  const std::string views = dir + "/views";
  const CliOutcome rebuilt = Ratelab({"report", json, "--out", views});
  ASSERT_EQ(rebuilt.exit, kExitOk) << rebuilt.err;
  const auto read = [&](const std::string& name) {
    std::ifstream in(views + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(nlohmann::json::parse(read("report.json")), nlohmann::json::parse(r.out));
  const std::string text = Ratelab({"worst", "memory-fixed-window", "--limit", "3", "--concurrency",
                                    "1,2", "--runs", "300"})
                               .out;
  EXPECT_NE(read("report.md").find(text), std::string::npos) << read("report.md");
  // A case per search; the worst found is a measure, and `worst` exited 0: no case fails.
  EXPECT_NE(read("junit.xml").find(R"(tests="2" failures="0" errors="0")"), std::string::npos)
      << read("junit.xml");
  // A report whose claim is not one is refused, naming where.
  nlohmann::json bad = nlohmann::json::parse(r.out);
  bad["claim"] = "most-ever";
  const CliOutcome refused =
      Ratelab({"report", testing_files::Write(dir, "bad.json", bad.dump()).string()});
  EXPECT_EQ(refused.exit, kExitBadInput);
  EXPECT_NE(refused.err.find("claim: unknown claim 'most-ever' (expected most-in-window, "
                             "over-bucket or false-denial-streak)"),
            std::string::npos)
      << refused.err;
}

TEST(WorstCommand, FindsTheFixedWindowsDoubleAndTheSlidingCountersOneLess) {
  for (const auto& [protocol, worst] : std::vector<std::pair<std::string, int>>{
           {"memory-fixed-window", 6}, {"memory-sliding-counter", 5}}) {
    const CliOutcome r = Ratelab(
        {"worst", protocol, "--limit", "3", "--concurrency", "1", "--runs", "1500", "--json"});
    ASSERT_EQ(r.exit, kExitOk) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["searches"][0]["value"], worst) << protocol;
  }
}

// The same breach at every concurrency is one witness, and says where it holds.
TEST(WorstCommand, TheSameBreachAtSeveralConcurrenciesIsShownOnce) {
  const CliOutcome r = Ratelab({"worst", "memory-sliding-counter", "--concurrency", "1,2,4"});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  size_t witnesses = 0;
  for (size_t at = r.out.find("best case:"); at != std::string::npos;
       at = r.out.find("best case:", at + 1)) {
    ++witnesses;
  }
  EXPECT_EQ(witnesses, 1u) << r.out;
  EXPECT_NE(r.out.find("the same breach holds at concurrencies 1, 2 and 4"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the same breach as at concurrency 1, whose witness is above"),
            std::string::npos)
      << r.out;
}

TEST(WorstCommand, RefusesWhatItCannotDo) {
  CliOutcome r = Ratelab({"worst", "memory-fixed-window", "--claim", "over-bucket"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--measure over-bucket needs a bucket algorithm"), std::string::npos)
      << r.err;
  r = Ratelab({"worst", "memory-fixed-window", "--concurrency", "1,0"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("'0' is not a concurrency"), std::string::npos) << r.err;
  r = Ratelab({"worst", "memory-fixed-window", "--claim", "worst"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("unknown claim 'worst'"), std::string::npos) << r.err;
}

// A measure, not a verdict: --junit skips each search's case with what it measured, never passes
// it; --out draws each search's witness on a page of its own.
TEST(WorstCommand, JunitSkipsEachMeasureAndOutDrawsItsWitness) {
  const fs::path dir = testing_files::TempDir("worst-out");
  fs::create_directories(dir);
  const CliOutcome r =
      Ratelab({"worst", "memory-fixed-window", "--concurrency", "1,2", "--runs", "300", "--junit",
               (dir / "junit.xml").string(), "--out", (dir / "report").string()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  const std::string junit = testing_files::Read(dir / "junit.xml");
  EXPECT_NE(junit.find("tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\""), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<skipped message=\"a measure, not a verdict: against &quot;at most 2 in "
                       "any 10s&quot;, 4 admitted"),
            std::string::npos)
      << junit;
  const std::string html = testing_files::Read(dir / "report" / "report.html");
  EXPECT_NE(html.find("A measure, not a verdict: against"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"witness\""), std::string::npos);
  EXPECT_NE(html.find("<h2>Concurrency 2, faults none</h2>"), std::string::npos);
}

// docs/worst.md quotes figures of runs at the defaults: each held to a run here, so that the page
// says what the command prints.
TEST(WorstCommand, TheFiguresDocsWorstQuotesAreTheOnesARunGives) {
  std::string page = testing_files::Read(fs::path(RATELAB_SOURCE_DIR) / "docs/worst.md");
  std::replace(page.begin(), page.end(), '\n', ' ');
  const auto worst = [](std::vector<std::string> args) {
    args.insert(args.begin(), "worst");
    args.push_back("--json");
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitOk) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto most = [](const nlohmann::json& j) {
    int64_t m = 0;
    for (const nlohmann::json& s : j["searches"]) m = std::max<int64_t>(m, s["value"]);
    return m;
  };
  const auto fixed = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  EXPECT_NE(page.find("the fixed window's 2N (" +
                      std::to_string(most(worst({"memory-fixed-window"}))) + ")"),
            std::string::npos);
  EXPECT_NE(page.find("the sliding counter's 2N - 1 (" +
                      std::to_string(most(worst({"memory-sliding-counter"}))) + ":"),
            std::string::npos);
  EXPECT_EQ(most(worst({"memory-anchored-window"})), 3) << "the anchored window's 2N - 1";
  const nlohmann::json racy = worst({"kv-token-bucket-hgetall-hset"});
  ASSERT_EQ(racy["searches"].size(), 4u);
  const nlohmann::json& s = racy["searches"];
  EXPECT_EQ(s[0]["value"], 0) << "nothing from one client";
  const std::string quoted = fixed(s[1]["amplification"]) + "x what the bound allows from two (" +
                             s[1]["value"].dump() + " over it), " + fixed(s[2]["amplification"]) +
                             "x from four and " + fixed(s[3]["amplification"]) + "x from eight";
  EXPECT_NE(page.find(quoted), std::string::npos) << "docs/worst.md should say: " << quoted;
  const nlohmann::json streak =
      worst({"kv-sliding-log-zset", "--measure", "false-denial-streak", "--concurrency", "1"});
  const std::string denials = streak["searches"][0]["value"].dump();
  EXPECT_NE(page.find(denials + " false denials in a row from one client"), std::string::npos)
      << "docs/worst.md should say: " << denials << " false denials in a row";
}

}  // namespace
}  // namespace ratelab
