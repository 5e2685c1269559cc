// A user's script as a protocol: its templates expand per request, a comma inside a placeholder
// stays in it, and reply fields in fractional seconds are fractions.
#include "impl/limiters/kv_user_lua.h"

#include <gtest/gtest.h>

#include "impl/core/clock.h"
#include "impl/store/memory_kv.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Instant kNewYear = FromUnixNanos(1767225600LL * 1'000'000'000);

Result<Decision> DecideOnce(const std::string& body, std::string_view keys, std::string_view args,
                            std::string_view reply, std::string_view decide = "") {
  Result<std::shared_ptr<const UserLuaScript>> script =
      ParseUserLua("lua:test.lua", body, keys, args, reply, decide);
  if (!script.ok()) return script.status();
  ManualClock clock(kNewYear);
  MemoryKv kv(clock);
  KvUserLua limiter(kv, Policy::Window(Algorithm::kFixedWindow, 5, seconds(10)), *script);
  InlineExecutor executor;
  Context ctx(executor, /*request=*/41);
  const Request request{"user", "u1", "/api", 1, kNewYear + milliseconds(2500)};
  return RunInline(limiter.Decide(ctx, request));
}

TEST(KvUserLua, TemplatesExpandPerRequest) {
  // The script answers with what it was given, so the test reads the expansion back.
  const Result<Decision> d = DecideOnce(
      "if KEYS[1] ~= 'rl:{user:u1:/api}:176722560' then return redis.error_reply(KEYS[1]) end\n"
      "if ARGV[1] ~= '5' or ARGV[2] ~= '1767225602.5' or ARGV[3] ~= '1767225600000' then\n"
      "  return redis.error_reply(table.concat(ARGV, ' '))\n"
      "end\n"
      "return {1, 4}\n",
      "rl:{{{key}}}:{window_index}", "{min(limit,9)},{now_s_float},{window_start_ms}",
      "allowed,remaining");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->allowed);
  EXPECT_EQ(d->remaining, 4);
}

TEST(KvUserLua, TheRequestsIdInItsRunIsAPlaceholder) {
  const Result<Decision> d = DecideOnce(
      "if ARGV[1] ~= 'm41' then return redis.error_reply(ARGV[1]) end\n"
      "return {1}\n",
      "rl:{key}", "m{request_id}", "allowed");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->allowed);
}

TEST(KvUserLua, ASetupRunsOncePerKeyAndAgainAfterARestart) {
  Result<std::shared_ptr<const UserLuaScript>> parsed = ParseUserLua(
      "lua:test.lua", "return {1, tonumber(redis.call('GET', 'setups:' .. KEYS[1]))}\n", "{key}",
      "", "allowed,remaining");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  auto script = std::make_shared<UserLuaScript>(**parsed);
  const std::vector<std::string> commands = {"INCR setups:{key}"};
  Result<std::vector<std::vector<ScriptTemplate>>> setup = ParseSetup(commands);
  ASSERT_TRUE(setup.ok()) << setup.status();
  script->setup = *setup;
  ManualClock clock(kNewYear);
  MemoryKv kv(clock);
  KvUserLua limiter(kv, Policy::Window(Algorithm::kFixedWindow, 5, seconds(10)), script);
  InlineExecutor executor;
  Context ctx(executor);
  const auto setups = [&](const std::string& user) {
    const Request request{"user", user, "/api", 1, kNewYear};
    const Result<Decision> d = RunInline(limiter.Decide(ctx, request));
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? d->remaining : -1;
  };
  EXPECT_EQ(setups("u1"), 1);
  EXPECT_EQ(setups("u1"), 1) << "once for the key";
  EXPECT_EQ(setups("u2"), 1) << "once for each key";
  limiter.Restart();
  EXPECT_EQ(setups("u1"), 2) << "again in a new process";
  const std::vector<std::string> bad = {"HSET c {nope}"};
  EXPECT_FALSE(ParseSetup(bad).ok());
}

TEST(KvUserLua, FractionalSecondsInAReplyAreFractions) {
  const Result<Decision> d =
      DecideOnce("return {0, '0', '0.401'}\n", "rl:{key}", "", "allowed,remaining,retry_after_s");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->allowed);
  EXPECT_EQ(d->retry_after, milliseconds(401));
  const Result<Decision> ms =
      DecideOnce("return {0, '250.5'}\n", "rl:{key}", "", "allowed,retry_after_ms");
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(ms->retry_after, std::chrono::microseconds(250500));
}

TEST(KvUserLua, TheDecisionIsAnExpressionOverTheReply) {
  const auto decide = [](const std::string& reply, const std::string& expression) {
    const Result<Decision> d =
        DecideOnce("return " + reply + "\n", "rl:{key}", "", "status,_,count", expression);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() && d->allowed;
  };
  EXPECT_TRUE(decide("{1, 0, 5}", "status == 1"));
  EXPECT_FALSE(decide("{2, 0, 5}", "status == 1"));
  EXPECT_TRUE(decide("{1, 0, 5}", "count <= {limit}"));
  EXPECT_FALSE(decide("{1, 0, 6}", "count <= limit"));
  EXPECT_TRUE(decide("{3, 0, 6}", "status == 3 or (count < 2 and not status)"));
  EXPECT_FALSE(decide("{1, 0, '5.5'}", "count <= limit && status != 1"));
}

TEST(KvUserLua, ANumberTooLargeForItsFieldIsNotANumber) {
  const Result<Decision> d =
      DecideOnce("return {0, '1e300'}\n", "rl:{key}", "", "allowed,retry_after_s");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("has no number for 'retry_after_s' at position 2"),
            std::string::npos)
      << d.status();
}

// A time is added to the request's instant: one of a century is refused before it could overflow
// it, while the same number as a count is read as one.
TEST(KvUserLua, ATimeOfMoreThan95YearsIsRefusedNamingTheField) {
  const Result<Decision> d =
      DecideOnce("return {0, 1, 3000000000000000}\n", "rl:{key}", "", "allowed,remaining,reset_ms");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'reset_ms' at position 3 is more than 95 years"),
            std::string::npos)
      << d.status();
  const Result<Decision> count =
      DecideOnce("return {0, 3000000000000000}\n", "rl:{key}", "", "allowed,remaining");
  ASSERT_TRUE(count.ok()) << count.status();
  EXPECT_EQ(count->remaining, 3'000'000'000'000'000);
}

TEST(KvUserLua, ABadTemplateIsNamedWithItsList) {
  const Result<Decision> d = DecideOnce("return 1\n", "rl:{key}", "{limit*}", "allowed");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            "--args: bad expression '{limit*}' in '{limit*}': an expression ends too soon");
}

}  // namespace
}  // namespace ratelab
