// A window offset written as a template over the key: the key's CRC-32 as the libraries compute
// it, a duration taken modulo the window, errors that say what is wrong; and a script sent the
// key's window index and start where its offset puts them.
#include "impl/limiters/window_offset.h"

#include <gtest/gtest.h>

#include "impl/core/clock.h"
#include "impl/limiters/kv_user_lua.h"
#include "impl/store/memory_kv.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Policy kTenSeconds = Policy::Window(Algorithm::kFixedWindow, 5, seconds(10));

std::string OffsetErrorOf(std::string_view text, const Policy& policy = kTenSeconds) {
  const Result<WindowOffset> o = ParseWindowOffset(text, policy);
  return o.ok() ? "ok" : std::string(o.status().message());
}

TEST(WindowOffset, TheKeysCrc32IsZlibs) {
  EXPECT_EQ(KeyCrc32("123456789"), 0xCBF43926u);     // the CRC-32 check value
  EXPECT_EQ(KeyCrc32("user:u1:/api"), 1838701181u);  // Python: zlib.crc32(b"user:u1:/api")
}

TEST(WindowOffset, ATemplateGivesEachKeyItsOffsetModuloTheWindow) {
  const Result<WindowOffset> spread = ParseWindowOffset("{key_crc32 % window_ms}ms", kTenSeconds);
  ASSERT_TRUE(spread.ok()) << spread.status();
  EXPECT_EQ(spread->of("user:u1:/api"), milliseconds(1181));  // 1838701181 % 10000
  EXPECT_EQ(spread->text, "{key_crc32 % window_ms}ms");
  const Result<WindowOffset> twelve = ParseWindowOffset("12s", kTenSeconds);
  ASSERT_TRUE(twelve.ok()) << twelve.status();
  EXPECT_EQ(twelve->of("any"), seconds(2)) << "a whole window more shifts nothing";
  const Result<Policy> p = WithWindowOffset(kTenSeconds, "250ms");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->OffsetOf("k"), milliseconds(250));
  EXPECT_FALSE(WithWindowOffset(kTenSeconds, "")->offset) << "none given, none set";
}

TEST(WindowOffset, AnOffsetOfTheRequestOrWithoutAUnitIsRefusedSayingWhy) {
  EXPECT_EQ(OffsetErrorOf("{now_ms % window_ms}ms"),
            "'{now_ms % window_ms}ms' uses {now_ms}: an offset is the key's and the policy's, "
            "the same for each of the key's requests (it may use {key_crc32}, {limit}, "
            "{burst}, {window_ms}, {window_s}, {rate_per_s}, {period_s})");
  EXPECT_EQ(OffsetErrorOf("{key_crc32 % window_ms}"),
            "'{key_crc32 % window_ms}' gives '900' for the key user:u1:%2Fapi, not a duration: "
            "give its unit, as in '{key_crc32 % window_ms}ms' or '250ms'");
  EXPECT_EQ(OffsetErrorOf("{nonsense}ms"),
            "unknown placeholder '{nonsense}' in '{nonsense}ms' (expected {key_crc32} {limit} "
            "{burst} {window_ms} {window_s} {rate_per_s} {period_s})");
  EXPECT_EQ(OffsetErrorOf("1s", Policy::Bucket(Algorithm::kGcra, 2, seconds(1))),
            "a window offset shifts aligned windows: fixed-window's and sliding-counter's, not "
            "gcra's");
}

TEST(WindowOffset, AScriptIsSentItsKeysWindowWhereItsOffsetPutsIt) {
  // key_crc32 1838701181: the key's windows of 10s start 1.181s past the epoch's. At 2.5s into
  // 2026 it is in the window that opened at 1.181s.
  Result<std::shared_ptr<const UserLuaScript>> script = ParseUserLua(
      "lua:test.lua",
      "if ARGV[1] ~= '1838701181' or ARGV[2] ~= '176722560' or ARGV[3] ~= '1767225601181' then\n"
      "  return redis.error_reply(table.concat(ARGV, ' '))\n"
      "end\n"
      "return {1, 4}\n",
      "rl:{key}", "{key_crc32},{window_index},{window_start_ms}", "allowed,remaining");
  ASSERT_TRUE(script.ok()) << script.status();
  const Instant new_year = FromUnixNanos(1767225600LL * 1'000'000'000);
  ManualClock clock(new_year);
  MemoryKv kv(clock);
  const Result<Policy> policy = WithWindowOffset(kTenSeconds, "{key_crc32 % window_ms}ms");
  ASSERT_TRUE(policy.ok()) << policy.status();
  KvUserLua limiter(kv, *policy, *script);
  InlineExecutor executor;
  Context ctx(executor, /*request=*/1);
  const Request request{"user", "u1", "/api", 1, new_year + milliseconds(2500)};
  const Result<Decision> d = RunInline(limiter.Decide(ctx, request));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->allowed);
}

}  // namespace
}  // namespace ratelab
