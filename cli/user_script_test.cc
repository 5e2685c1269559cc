// `ratelab check --lua`: a user's own script, held to its model's promise. Correct scripts in
// the styles real libraries use pass; flawed ones are caught at the user's own policy; a script
// that errs, answers with a count or a boolean, or keeps its interface in a spec is judged
// right, never refused and never passed silently.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "cli/cli_test_util.h"
#include "cli/exit_codes.h"
#include "impl/limiters/window_offset.h"
#include "sim/search.h"
#include "testing/files.h"

namespace ratelab {
namespace {

std::vector<std::string> UserLua(const std::string& file, std::vector<std::string> more) {
  std::vector<std::string> args = {"check",
                                   "--lua",
                                   file,
                                   "--model",
                                   "fixed-window",
                                   "--args",
                                   "{limit},{window_ms},{now_ms}",
                                   "--reply",
                                   "allowed,remaining"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CheckLua, BringYourOwnLuaACorrectScriptPasses) {
  const auto file = testing_files::Write(testing_files::TempDir("lua"), "fixed_window.lua",
                                         FixedWindowScript(">="));
  CliOutcome r = Ratelab(UserLua(file.string(), {"--seeds", "300"}));
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("nothing found in 300 seed(s)"), std::string::npos) << r.out;
}

TEST(CheckLua, BringYourOwnLuaAnOffByOneScriptIsCaught) {
  const auto file =
      testing_files::Write(testing_files::TempDir("lua"), "off_by_one.lua", FixedWindowScript(">"));
  CliOutcome r = Ratelab(UserLua(file.string(), {"--limit", "1", "--seeds", "20", "--json"}));
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "aligned-window-cap");
  EXPECT_EQ(j["requests"], 2) << "limit 1: the second request in a window";
  EXPECT_NE(j["reproduce"].get<std::string>().find("--lua " + file.string()), std::string::npos);
}

// A correct script whose reply is read in the wrong order looks broken: its false denials come
// with a hint at --reply. A script whose false denials are its own (it denies the last request a
// window holds room for) gets none.
TEST(CheckLua, AReplyReadOutOfOrderGetsAHintAtReply) {
  const auto good = testing_files::Write(testing_files::TempDir("lua"), "fixed_window.lua",
                                         FixedWindowScript(">="));
  std::vector<std::string> reversed = UserLua(good.string(), {"--seeds", "20"});
  reversed[8] = "remaining,allowed";
  CliOutcome r = Ratelab(reversed);
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("VIOLATION of false-denials"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("remaining, which a reply read in the wrong order looks like: are "
                       "--reply's fields"),
            std::string::npos)
      << r.out;
  reversed.push_back("--json");
  EXPECT_NE(nlohmann::json::parse(Ratelab(reversed).out)["hint"].get<std::string>(), "");

  const std::string strict =
      absl::StrReplaceAll(FixedWindowScript(">="), {{"count >= limit", "count >= limit - 1"}});
  const auto own = testing_files::Write(testing_files::TempDir("lua"), "strict.lua", strict);
  r = Ratelab(UserLua(own.string(), {"--limit", "2", "--seeds", "20"}));
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("VIOLATION of false-denials"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hint:"), std::string::npos) << r.out;
}

TEST(CheckLua, BringYourOwnLuaScriptErrorsAndBadTemplatesAreReported) {
  const auto dir = testing_files::TempDir("lua");
  const auto broken = testing_files::Write(dir, "broken.lua", "return redis.call('NOPE')\n");
  CliOutcome r = Ratelab(UserLua(broken.string(), {}));
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("the script failed: ERR unknown command 'NOPE'"), std::string::npos)
      << r.err;
  const auto syntax = testing_files::Write(dir, "syntax.lua", "return {1,\n");
  r = Ratelab(UserLua(syntax.string(), {}));
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("the script failed: ERR"), std::string::npos) << r.err;
  const auto fine = testing_files::Write(dir, "fine.lua", FixedWindowScript(">="));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"check", "--lua", fine.string(), "--model", "fixed-window", "--args", "{windw}"},
       "unknown placeholder '{windw}'"},
      {{"check", "--lua", fine.string(), "--model", "fixed-window", "--reply", "remaining"},
       "name the field that says allowed or limited"},
      {{"check", "--lua", fine.string(), "--model", "fixed-window", "--reply", "allowed,cost"},
       "unknown field 'cost'"},
      {{"check", "--lua", fine.string(), "--model", "leaky-bucket"},
       "--model 'leaky-bucket' is not an algorithm"},
      {{"check", "--lua", fine.string()},
       "--lua needs --model, the algorithm whose promise the limiter is held to (one of "
       "fixed-window, sliding-log, "},
      {{"check", "--lua", (dir / "missing.lua").string(), "--model", "gcra"},
       "missing.lua: cannot open the Lua script"},
      {{"check", "kv-gcra-lua", "--lua", fine.string(), "--model", "gcra"},
       "give one of a protocol, --lua and --exec"},
      // The reply has two numbers; a third field finds none.
      {{"check", "--lua", fine.string(), "--model", "fixed-window", "--args",
        "{limit},{window_ms},{now_ms}", "--reply", "allowed,remaining,retry_after_ms"},
       "has no number for 'retry_after_ms' at position 3"},
  };
  for (const auto& [args, expected] : cases) {
    r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << expected;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
}

// A script that errs only once a key is past its limit: one request on a fresh key cannot show
// it, so only the search can. Before, such a run counted the errors as lost requests and ended
// "nothing found".
constexpr char kErrsPastTheLimit[] =
    "local n = redis.call('INCR', KEYS[1])\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[2])\n"
    "if n > tonumber(ARGV[1]) + 1 then return redis.call('HGET', KEYS[1], 'f') end\n"
    "if n > tonumber(ARGV[1]) then return {0} end\n"
    "return {1}\n";

TEST(CheckLua, AScriptThatFailsMidSearchIsAFailureNotNothingFound) {
  const auto file =
      testing_files::Write(testing_files::TempDir("lua"), "errs.lua", kErrsPastTheLimit);
  const std::vector<std::string> args = {
      "check",   "--lua", file.string(), "--model", "fixed-window", "--args", "{limit},{window_ms}",
      "--seeds", "50"};
  CliOutcome r = Ratelab(args);
  ASSERT_EQ(r.exit, kExitLimiterFailed) << r.out << r.err;
  EXPECT_NE(r.out.find(": FAILED (seed "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the script failed: WRONGTYPE"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nothing found"), std::string::npos) << r.out;
  std::vector<std::string> json = args;
  json.push_back("--json");
  r = Ratelab(json);
  ASSERT_EQ(r.exit, kExitLimiterFailed) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "failure");
  EXPECT_NE(j["failure"].get<std::string>().find("WRONGTYPE"), std::string::npos);
  EXPECT_EQ(j["request"]["key"].get<std::string>().rfind("user:u", 0), 0u) << j["request"];
  EXPECT_EQ(j["request"]["outcome"].get<std::string>().rfind("failed: ", 0), 0u) << j["request"];
  EXPECT_FALSE(j["request"]["complete_s"].is_null()) << "it was answered, with an error";
  // The reproduce line replays it.
  const std::string reproduce = j["reproduce"];
  EXPECT_NE(reproduce.find("--seed " + j["seed"].dump()), std::string::npos) << reproduce;
}

// A script whose error holds bytes that are not UTF-8 once aborted --json (the JSON writer threw):
// the failure is reported in every form, the bytes written as U+FFFD where the format needs text.
TEST(CheckLua, AFailureWhoseMessageIsNotUtf8IsReportedInEveryForm) {
  const fs::path dir = testing_files::TempDir("lua-bytes");
  const auto file = testing_files::Write(
      dir, "bytes.lua",
      "local n = redis.call('INCR', KEYS[1])\n"
      "if n > 2 then return redis.error_reply(string.char(255, 254) .. ' broken') end\n"
      "return {1, 5 - n}\n");
  const std::vector<std::string> args = {
      "check",    "--lua",  file.string(), "--model", "fixed-window",
      "--limit",  "5",      "--window",    "1m",      "--keys",
      "rl:{key}", "--args", "{limit}",     "--reply", "allowed,remaining"};
  std::vector<std::string> json = args;
  json.insert(json.end(), {"--json", "--junit", (dir / "junit.xml").string()});
  const CliOutcome r = Ratelab(json);
  ASSERT_EQ(r.exit, kExitLimiterFailed) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["failure"].get<std::string>().find("\xef\xbf\xbd\xef\xbf\xbd broken"),
            std::string::npos)
      << j["failure"];
  const std::string junit = testing_files::Read(dir / "junit.xml");
  EXPECT_NE(junit.find("\xef\xbf\xbd\xef\xbf\xbd broken"), std::string::npos) << junit;
  EXPECT_EQ(junit.find('\xff'), std::string::npos);
}

TEST(CheckLua, ABooleanReplySaysAllowedOrNot) {
  // Lua's false arrives as nil: for allowed, that is a denial, not a reply of the wrong shape.
  const auto file = testing_files::Write(
      testing_files::TempDir("lua"), "boolean.lua",
      "local key = KEYS[1] .. ':' .. math.floor(tonumber(ARGV[3]) / tonumber(ARGV[2]))\n"
      "local n = tonumber(redis.call('GET', key) or '0')\n"
      "if n >= tonumber(ARGV[1]) then return false end\n"
      "redis.call('INCR', key)\n"
      "redis.call('PEXPIRE', key, 2 * tonumber(ARGV[2]) + 1000)\n"
      "return true\n");
  CliOutcome r = Ratelab({"check", "--lua", file.string(), "--model", "fixed-window", "--args",
                          "{limit},{window_ms},{now_ms}", "--reply", "allowed", "--seeds", "100"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
}

// Many libraries' scripts answer with a count or a signed remaining, and decide outside Lua:
// --decide states that decision, at the user's own policy.
constexpr char kCountsInTheWindow[] =
    "local key = KEYS[1] .. ':' .. ARGV[1]\n"
    "local n = redis.call('INCR', key)\n"
    "if n == 1 then redis.call('PEXPIRE', key, ARGV[2] * 2 + 1000) end\n"
    "return n\n";

std::vector<std::string> CountScript(const std::string& file, const std::string& decide) {
  return {"check",
          "--lua",
          file,
          "--model",
          "fixed-window",
          "--args",
          "{window_index},{window_ms}",
          "--reply",
          "count",
          "--decide",
          decide,
          "--limit",
          "3",
          "--seeds",
          "100"};
}

TEST(CheckLua, ACountReplyIsJudgedByTheDecisionTheUserStates) {
  const auto dir = testing_files::TempDir("lua");
  const auto file = testing_files::Write(dir, "count.lua", kCountsInTheWindow);
  CliOutcome r = Ratelab(CountScript(file.string(), "count <= {limit}"));
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // Deciding one too late is caught, with a witness at the user's own limit.
  std::vector<std::string> off = CountScript(file.string(), "count <= limit + 1");
  off.push_back("--json");
  r = Ratelab(off);
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "aligned-window-cap");
  EXPECT_EQ(j["policy"], "fixed-window 3 per 10s");
  EXPECT_NE(j["reproduce"].get<std::string>().find("--decide 'count <= limit + 1'"),
            std::string::npos);
  // A signed remaining, as other libraries answer.
  const auto signed_remaining =
      testing_files::Write(dir, "remaining.lua",
                           "local key = KEYS[1] .. ':' .. ARGV[1]\n"
                           "local n = redis.call('INCR', key)\n"
                           "if n == 1 then redis.call('PEXPIRE', key, ARGV[2] * 2 + 1000) end\n"
                           "return {tonumber(ARGV[3]) - n, n}\n");
  r = Ratelab({"check", "--lua", signed_remaining.string(), "--model", "fixed-window", "--args",
               "{window_index},{window_ms},{limit}", "--reply", "remaining,count", "--decide",
               "remaining >= 0", "--limit", "3", "--seeds", "100"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // A decision that names what the reply does not have is refused before any search.
  r = Ratelab(CountScript(file.string(), "total <= limit"));
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--decide: unknown name 'total' in 'total <= limit'"), std::string::npos)
      << r.err;
  r = Ratelab(CountScript(file.string(), "count <="));
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--decide: an expression ends too soon"), std::string::npos) << r.err;
}

TEST(CheckLua, AScriptsInterfaceCanLiveInASpecBesideIt) {
  const auto dir = testing_files::TempDir("spec");
  testing_files::Write(dir, "off_by_one.lua", FixedWindowScript(">"));
  const auto spec = testing_files::Write(dir, "off_by_one.yaml",
                                         "script: off_by_one.lua\n"
                                         "model: fixed-window\n"
                                         "args: [\"{limit}\", \"{window_ms}\", \"{now_ms}\"]\n"
                                         "reply: [allowed, remaining]\n");
  CliOutcome r =
      Ratelab({"check", "--lua-spec", spec.string(), "--limit", "1", "--seeds", "20", "--json"});
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "aligned-window-cap");
  EXPECT_EQ(j["requests"], 2);
  EXPECT_NE(j["reproduce"].get<std::string>().find("--lua-spec " + spec.string() + " --limit 1"),
            std::string::npos)
      << j["reproduce"];
  r = Ratelab({"check", "--lua-spec", spec.string(), "--model", "gcra"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("give --lua-spec, or --lua with"), std::string::npos) << r.err;
  r = Ratelab({"check", "--lua-spec", (dir / "missing.yaml").string()});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("missing.yaml: cannot open the Lua script's spec"), std::string::npos)
      << r.err;
}

// The script corpus (property-tests/scripts/): a file of it.
std::string Corpus(const std::string& name) {
  return std::string(RATELAB_SOURCE_DIR) + "/property-tests/scripts/" + name;
}

TEST(CheckLua, AWindowOffsetPerKeyIsJudgedAtTheKeysOwnEdges) {
  // The corpus's spread fixed window: each key's windows of 10s start at its CRC-32 modulo the
  // window, as its client sends it. Judged there (its spec's window_offset, or the flag: one
  // place or the other), nothing; judged at the epoch's edges, it is accused of windows it does
  // not keep.
  const std::vector<std::string> policy = {"--limit", "3", "--window", "10s", "--seeds", "100"};
  const auto check = [&](const std::string& spec, std::vector<std::string> more) {
    std::vector<std::string> args = {"check", "--lua-spec", Corpus(spec)};
    args.insert(args.end(), policy.begin(), policy.end());
    args.insert(args.end(), more.begin(), more.end());
    return Ratelab(args);
  };
  CliOutcome r = check("fixed_window_key_offset.yaml", {});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("fixed-window 3 per 10s, each key's windows from {key_crc32 % "
                       "window_ms}ms"),
            std::string::npos)
      << r.out;
  r = check("fixed_window_key_offset_at_epoch.yaml", {"--json"});
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["violation"]["invariant"], "aligned-window-cap");
  r = check("fixed_window_key_offset_at_epoch.yaml",
            {"--window-offset", "{key_crc32 % window_ms}ms"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  r = check("fixed_window_key_offset.yaml", {"--window-offset", "1s"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--window-offset: the spec gives the window offset"), std::string::npos)
      << r.err;

  // Sent one more than its limit, it over-admits in the key's own window, which the finding
  // names: from the key's offset past a multiple of 10s, and its reproduce line carries it.
  const auto dir = testing_files::TempDir("offset");
  const auto over = testing_files::Write(
      dir, "over.yaml",
      "script: " + Corpus("fixed_window_key_offset.lua") +
          "\nmodel: fixed-window\nargs: ['{limit+1}', '{window_ms}', '{now_ms}', "
          "'{key_crc32}']\nreply: [allowed, remaining]\n");
  r = Ratelab({"check", "--lua-spec", over.string(), "--limit", "3", "--window", "10s",
               "--window-offset", "{key_crc32 % window_ms}ms", "--json"});
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string key = j["violation"]["key"];
  const int64_t offset_ms = KeyCrc32(key) % 10'000;
  char start[16];
  std::snprintf(start, sizeof start, "%01d.%03d, ", static_cast<int>(offset_ms / 1000),
                static_cast<int>(offset_ms % 1000));
  EXPECT_NE(j["violation"]["summary"].get<std::string>().find(start), std::string::npos)
      << j["violation"]["summary"] << " (key " << key << ", offset " << offset_ms << "ms)";
  EXPECT_NE(j["reproduce"].get<std::string>().find("--window-offset '{key_crc32 % window_ms}ms'"),
            std::string::npos)
      << j["reproduce"];
}

TEST(CheckLua, AServerClockScriptIsJudgedWhenTheStoreRanIt) {
  // A GCRA that reads TIME decides when the store runs it, a round trip (two, after NOSCRIPT)
  // after the client sent it: judged at the sending, it admits "early".
  CliOutcome r =
      Ratelab({"check", "--lua-spec", Corpus("gcra_server_clock.yaml"), "--burst", "3", "--rate",
               "2", "--seeds", "200", "--faults", "crash,store-restart,clock-skew", "--json"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["clock"], "server") << "detected: it calls TIME";
  EXPECT_EQ(nlohmann::json::parse(r.out)["judged_at"],
            "1us (it reads the time with TIME, in microseconds)");
  // Told it decides on the client's clock, ratelab judges it so, and cries wolf: --clock is
  // what the detection decides.
  r = Ratelab({"check", "--lua", Corpus("gcra_server_clock.lua"), "--model", "gcra", "--args",
               "{burst},{rate_per_s},1,{cost}", "--reply", "count,remaining,retry_after_s,reset_s",
               "--decide", "count > 0", "--burst", "3", "--rate", "2", "--clock", "client",
               "--seeds", "200"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("decided on the client's clock, judged to 1us (it is sent no finer time "
                       "than its window)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--clock client"), std::string::npos) << "the reproduce line keeps it";
}

TEST(CheckLua, AWindowKeptAsAKeysTimeToLiveIsJudgedOnTheStoresClock) {
  // INCR, and PEXPIRE on the first hit: the window opens when the store runs the first request,
  // and a request whose answer a crash took may have opened it.
  CliOutcome r = Ratelab({"check", "--lua-spec", Corpus("fixed_window_ttl.yaml"), "--limit", "3",
                          "--seeds", "300", "--faults", "crash,store-restart,store-outage"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("decided on the server's clock, judged to 1ms (the store expires keys by "
                       "the millisecond)"),
            std::string::npos)
      << r.out;
}

TEST(CheckLua, AScriptOnWholeSecondsIsJudgedInWholeSeconds) {
  // A bucket that reads only TIME's seconds refills nothing within a second: judged at the
  // microseconds TIME could give, it admits "too early" across each second's edge; told its
  // resolution, it keeps its promise and has no false denials.
  const std::vector<std::string> script = {"check",
                                           "--lua",
                                           Corpus("token_bucket_whole_seconds.lua"),
                                           "--model",
                                           "token-bucket",
                                           "--keys",
                                           "rl:{{{key}}}:tokens,rl:{{{key}}}:ts",
                                           "--args",
                                           "{rate_per_s},{burst}",
                                           "--reply",
                                           "allowed,remaining",
                                           "--burst",
                                           "3",
                                           "--rate",
                                           "2",
                                           "--seeds",
                                           "200",
                                           "--checks",
                                           "promise,false-denials"};
  CliOutcome r = Ratelab(script);
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  std::vector<std::string> whole = script;
  whole.insert(whole.end(), {"--resolution", "1s"});
  r = Ratelab(whole);
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("judged to 1s (as given by --resolution or the spec)"), std::string::npos)
      << r.out;
  r = Ratelab({"check", "--lua", Corpus("token_bucket_whole_seconds.lua"), "--model",
               "token-bucket", "--resolution", "0s"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--resolution"), std::string::npos) << r.err;
}

// Libraries that fail open admit when their script errs, those that fail closed deny: judged as
// their users run them, the one over-admits and the other denies falsely, and the witness says
// which answers the client gave itself.
TEST(CheckLua, AScriptErrorIsJudgedAsItsClientAnswersIt) {
  const auto check = [](const std::string& on_error) {
    return Ratelab({"check", "--lua-spec", Corpus("fixed_window_ttl_cjson_failing.yaml"), "--limit",
                    "3", "--on-script-error", on_error, "--json"});
  };
  CliOutcome r = check("fail");
  EXPECT_EQ(r.exit, kExitLimiterFailed) << r.out << r.err;
  r = check("admit");
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "anchored-window-cap") << j;
  EXPECT_NE(j["violation"].dump().find("admitted by the client: the limiter failed"),
            std::string::npos)
      << j;
  EXPECT_NE(j["reproduce"].get<std::string>().find("--on-script-error admit"), std::string::npos)
      << j["reproduce"];
  r = check("deny");
  ASSERT_EQ(r.exit, kExitViolation) << r.out << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["violation"]["invariant"], "false-denials") << j;
  EXPECT_NE(j["violation"].dump().find("denied by the client: the limiter failed"),
            std::string::npos)
      << j;
  // Held to its promise alone, a limiter whose client denies whenever it fails keeps it: the
  // verdict says how often it failed.
  r = Ratelab({"check", "--lua-spec", Corpus("fixed_window_ttl_cjson_failing.yaml"), "--limit", "3",
               "--on-script-error", "deny", "--checks", "promise", "--seeds", "20"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("but the limiter failed on "), std::string::npos) << r.out;
  r = check("ignore");
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--on-script-error: 'ignore' is not an answer to a script error (expected "
                       "fail, admit or deny)"),
            std::string::npos)
      << r.err;
  r = Ratelab({"check", "kv-gcra-lua", "--on-script-error", "admit"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--on-script-error is for a script"), std::string::npos) << r.err;
}

// A window kept as a key's TTL opens at the millisecond the store ran the first request, and
// Redis (as MemoryKv) keeps the key through its expiry's millisecond: the window is
// [open, open + W] on the store's milliseconds, with no tie at its edge. A script that takes PTTL
// 0 as expired admits in that millisecond into the window the store still keeps, a violation as
// printed; one that reads the count there (fixed_window_ttl.lua) denies, and is no false denial.
// Two requests of one key a window apart, over seeds whose latencies put the second in the
// first's expiry millisecond.
TEST(CheckLua, AnAdmissionInTheStoresTickOfAWindowsEdgeIsInTheWindowTheStoreKeeps) {
  const auto protocol_of = [](const std::string& file, const std::string& args,
                              const std::string& reply, const std::string& decide) {
    UserScript script;
    script.path = Corpus(file);
    script.model = Algorithm::kAnchoredWindow;
    script.args = args;
    script.reply = reply;
    script.decide = decide;
    return ResolveProtocol("", script);
  };
  const Result<std::shared_ptr<const ProtocolInfo>> flawed =
      protocol_of("fixed_window_ttl_pttl_zero.lua", "{window_ms},{limit}", "allowed,remaining", "");
  const Result<std::shared_ptr<const ProtocolInfo>> correct =
      protocol_of("fixed_window_ttl.lua", "{window_ms}", "count,reset_ms", "count <= {limit}");
  ASSERT_TRUE(flawed.ok()) << flawed.status();
  ASSERT_TRUE(correct.ok()) << correct.status();
  Case c;
  c.policy = Policy::Window(Algorithm::kAnchoredWindow, 1, std::chrono::seconds(10));
  c.checks = {CheckId::kPromise, CheckId::kFalseDenials};
  c.nodes.assign(1, NodeSpec{});
  c.arrivals = {{c.start + std::chrono::microseconds(818'108), "u1", "/api", 1, 1},
                {c.start + std::chrono::microseconds(10'818'108), "u1", "/api", 1, 2}};
  const auto ms = [](const HistoryEvent& e) {
    return std::chrono::floor<std::chrono::milliseconds>(e.steps.back().at.time_since_epoch());
  };
  int ties = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const Result<CaseRun> run = RunCase(*flawed, c, seed, nullptr);
    ASSERT_TRUE(run.ok()) << run.status();
    const HistoryEvent& first = run->history[0];
    const HistoryEvent& second = run->history[1];
    const bool tie = ms(second) == ms(first) + std::chrono::seconds(10);
    ties += tie;
    if (tie) {
      EXPECT_TRUE(second.admitted()) << "seed " << seed;
      ASSERT_TRUE(run->first) << "seed " << seed << ": the tie's admission is not found";
      EXPECT_EQ(run->first->invariant, CheckId::kAnchoredWindowCap);
    } else {
      EXPECT_FALSE(run->first) << "seed " << seed << ": " << run->first->ToString();
    }
    const Result<CaseRun> right = RunCase(*correct, c, seed, nullptr);
    ASSERT_TRUE(right.ok()) << right.status();
    EXPECT_FALSE(right->first) << "seed " << seed << ": " << right->first->ToString();
    // It denies while the store keeps the key, its expiry's millisecond included.
    EXPECT_EQ(right->history[1].denied(),
              ms(right->history[1]) <= ms(right->history[0]) + std::chrono::seconds(10))
        << "seed " << seed;
  }
  EXPECT_GT(ties, 0) << "no seed put the second request in the edge's millisecond";
  EXPECT_LT(ties, 60) << "every seed put the second request in the edge's millisecond";
}

// A script that reads its limit from a configuration its library writes once, when the limiter
// object is made: refused as "not initialized" without that setup, judged right with it.
TEST(CheckLua, StateALibraryWritesBeforeTheFirstRequestIsItsSetup) {
  std::vector<std::string> args = {"check",
                                   "--lua",
                                   Corpus("sliding_log_configured.lua"),
                                   "--model",
                                   "sliding-log",
                                   "--keys",
                                   "rl:{{{key}}}:config,rl:{{{key}}}:log",
                                   "--args",
                                   "{now_ms},{request_id}",
                                   "--reply",
                                   "allowed,remaining",
                                   "--limit",
                                   "3",
                                   "--checks",
                                   "promise,false-denials",
                                   "--seeds",
                                   "100"};
  CliOutcome r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitBadInput) << r.out << r.err;
  EXPECT_NE(r.err.find("RateLimiter is not initialized"), std::string::npos) << r.err;
  args.insert(args.end(), {"--setup", "HSET rl:{{{key}}}:config limit {limit} window {window_ms}"});
  r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  // Set up with a lower limit than the promise, it is caught: the setup is what the script reads.
  args.back() = "HSET rl:{{{key}}}:config limit {limit+1} window {window_ms}";
  r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("step: HSET rl:{user:"), std::string::npos) << "in the witness\n" << r.out;
  EXPECT_NE(r.out.find("--setup 'HSET rl:{{{key}}}:config limit {limit+1} window {window_ms}'"),
            std::string::npos)
      << "the reproduce line keeps it\n"
      << r.out;
  args.back() = "HSET rl:{{{key}}}:config limit {lmit}";
  r = Ratelab(args);
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("--setup 'HSET rl:{{{key}}}:config limit {lmit}': unknown placeholder"),
            std::string::npos)
      << r.err;
  r = Ratelab({"check", "--lua-spec", Corpus("sliding_log_configured.yaml"), "--setup", "PING"});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("give --setup in the spec"), std::string::npos) << r.err;
}

// A pacer admits a burst with growing waits, and its client forwards each after its wait: judged
// at the forwarding it keeps a bucket of one; judged at the decision it is accused.
TEST(CheckLua, AnAdmissionWithAWaitIsJudgedWhenItIsForwarded) {
  const auto check = [](const std::string& spec, std::vector<std::string> more) {
    std::vector<std::string> args = {"check", "--lua-spec", Corpus(spec), "--burst",
                                     "1",     "--rate",     "2"};
    args.insert(args.end(), more.begin(), more.end());
    return Ratelab(args);
  };
  CliOutcome r = check("smoothing_leaky_bucket.yaml",
                       {"--checks", "promise,false-denials,key-expiry", "--seeds", "200"});
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  r = check("smoothing_leaky_bucket_no_wait.yaml", {"--faults", "none"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  // The witness of a pacer made to break its bucket (a wait one interval short) says the waits.
  const auto file = testing_files::Write(
      testing_files::TempDir("lua"), "pacer.yaml",
      "script: " + Corpus("smoothing_leaky_bucket.lua") +
          "\nmodel: token-bucket\nargs: [\"{window_ms/2}\", \"{window_ms*3}\", \"{now_ms}\"]\n"
          "reply: [allowed, wait_ms, retry_after_ms]\n");
  r = Ratelab(
      {"check", "--lua-spec", file.string(), "--burst", "1", "--rate", "2", "--faults", "none"});
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_NE(r.out.find("admitted, to go after "), std::string::npos) << r.out;
  r = check("smoothing_leaky_bucket.yaml", {"--checks", "retry-after"});
  EXPECT_EQ(r.exit, kExitBadInput) << r.out << r.err;
  EXPECT_NE(r.err.find("admits with a wait"), std::string::npos) << r.err;
}

// A third-party script, unmodified: rate-limit-redis's increment script, as the npm package
// installed for the Express app's tests (testing/node/express-limiter) holds it, with the
// leading white space of each line removed as the library removes it before it sends it. It keeps
// a window in the key's TTL, takes PTTL <= 0 (its expiry's own millisecond included) as a new
// window, and the middleware admits while the count is within the limit. Expected: nothing
// found. With resetExpiryOnChange, each hit pushes the expiry back, so a window never closes
// while traffic keeps coming: stricter than an anchored window, so false denials by its model.
TEST(CheckLua, RateLimitRedisIncrementScriptAsItsPackageHoldsIt) {
  const std::filesystem::path package =
      std::filesystem::path(RATELAB_SOURCE_DIR) /
      "testing/node/express-limiter/node_modules/rate-limit-redis/dist/index.cjs";
  if (!std::filesystem::exists(package)) {
    const std::string missing = package.string() + " is missing (scripts/test installs it)";
    if (std::getenv("CI") != nullptr) FAIL() << missing;
    GTEST_SKIP() << missing;
  }
  const std::string source = testing_files::Read(package);
  const size_t from = source.find("increment: `");
  const size_t to = source.find("`.replaceAll", from);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  std::string script;
  std::istringstream lines(source.substr(from + 12, to - from - 12));
  for (std::string line; std::getline(lines, line);) {
    line.erase(0, line.find_first_not_of(" \t"));
    if (!line.empty()) script += line + "\n";
  }
  ASSERT_NE(script.find("redis.call(\"PTTL\", KEYS[1])"), std::string::npos) << script;
  const auto file =
      testing_files::Write(testing_files::TempDir("rate-limit-redis"), "increment.lua", script);
  const auto check = [&](const std::string& reset_on_change) {
    return Ratelab({"check",
                    "--lua",
                    file.string(),
                    "--model",
                    "anchored-window",
                    "--keys",
                    "rl:{key}",
                    "--args",
                    reset_on_change + ",{window_ms}",
                    "--reply",
                    "count,reset_ms",
                    "--decide",
                    "count <= {limit}",
                    "--limit",
                    "3",
                    "--window",
                    "10s",
                    "--seeds",
                    "300",
                    "--faults",
                    "crash,store-restart,store-outage",
                    "--checks",
                    "promise,false-denials",
                    "--json"});
  };
  CliOutcome r = check("0");
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["clock"], "server") << "its window is a key's TTL";
  r = check("1");
  EXPECT_EQ(r.exit, kExitViolation) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["violation"]["invariant"], "false-denials") << r.out;
}

TEST(CheckLua, EachConventionIsJudgedByItsOwnPromiseAtItsResolution) {
  // A sorted-set log trimmed with an exclusive bound keeps an entry one window old: closed, it
  // passes as sliding-log-closed; as the half-open sliding log it denies where that one has room,
  // but only at a tie, which a script sent the time in milliseconds cannot tell from an entry a
  // little younger: forgiven (judge/checks_test.cc has a tie the floor did not make).
  const auto log = [](const char* model) {
    return Ratelab({"check", "--lua", Corpus("sliding_log_zset_closed.lua"), "--model", model,
                    "--keys", "rl:{{{key}}},rl:{{{key}}}:seq", "--args",
                    "{limit},{window_ms},{now_ms}", "--reply", "allowed,remaining", "--limit", "3",
                    "--window", "10s", "--seeds", "200", "--json"});
  };
  CliOutcome r = log("sliding-log-closed");
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
  r = log("sliding-log");
  EXPECT_EQ(r.exit, kExitOk) << r.out << r.err;
}

}  // namespace
}  // namespace ratelab
