// A Lua spec: the script's interface read from YAML, the script found beside the spec, and each
// mistake located.
#include "sim/lua_spec.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

TEST(LuaSpec, ReadsTheInterfaceAsListsOrAsTheFlagsWouldTakeIt) {
  Result<UserScript> s = ParseLuaSpec(
      "script: limiter.lua\n"
      "model: fixed-window\n"
      "keys: [\"rl:{{{key}}}\"]\n"
      "args: [\"{limit}\", \"{min(limit,5)}\", \"{now_ms}\"]\n"
      "reply: allowed,remaining\n",
      "spec.yaml", "/srv/limits");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->path, "/srv/limits/limiter.lua") << "found beside the spec";
  EXPECT_EQ(s->model, Algorithm::kFixedWindow);
  EXPECT_EQ(s->keys, "rl:{{{key}}}");
  EXPECT_EQ(s->args, "{limit},{min(limit,5)},{now_ms}");
  EXPECT_EQ(s->reply, "allowed,remaining");
  EXPECT_EQ(s->decide, "");

  s = ParseLuaSpec("script: /abs/l.lua\nmodel: gcra\nreply: [count]\ndecide: count <= {limit}\n",
                   "spec.yaml", "/srv");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->path, "/abs/l.lua");
  EXPECT_EQ(s->keys, "rl:{key}") << "the default, as for --keys";
  EXPECT_EQ(s->decide, "count <= {limit}");
  EXPECT_FALSE(s->clock.has_value()) << "unset: detected from the script";

  s = ParseLuaSpec("script: l.lua\nmodel: gcra\nclock: server\n", "spec.yaml", ".");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->clock, DecisionClock::kStore);
  EXPECT_FALSE(s->resolution.has_value()) << "unset: from the script's placeholders";

  s = ParseLuaSpec("script: l.lua\nmodel: token-bucket\nresolution: 1s\n", "spec.yaml", ".");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->resolution, std::chrono::seconds(1));

  s = ParseLuaSpec(
      "script: l.lua\nmodel: gcra\nsetup: [\"HSET c:{key} rate {rate_per_s}\", PING]\n",
      "spec.yaml", ".");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->setup, (std::vector<std::string>{"HSET c:{key} rate {rate_per_s}", "PING"}));

  s = ParseLuaSpec(
      "script: l.lua\nmodel: fixed-window\nwindow_offset: '{key_crc32 % window_ms}ms'\n",
      "spec.yaml", ".");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->window_offset, "{key_crc32 % window_ms}ms");
}

TEST(LuaSpec, MistakesAreLocated) {
  const auto error = [](const std::string& text) {
    Result<UserScript> s = ParseLuaSpec(text, "spec.yaml", ".");
    EXPECT_FALSE(s.ok()) << text;
    return s.ok() ? std::string() : std::string(s.status().message());
  };
  EXPECT_EQ(error("model: gcra\n"), "spec.yaml:1:1: missing 'script'");
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nreplies: [allowed]\n"),
            "spec.yaml:3:1: unknown key 'replies' in a Lua spec (expected one of: script, model, "
            "keys, args, reply, decide, clock, resolution, setup, window_offset)");
  EXPECT_EQ(error("script: l.lua\nmodel: fixed-window\nwindow_offset: '{now_ms}ms'\n"),
            "spec.yaml:3:16: 'window_offset': '{now_ms}ms' uses {now_ms}: an offset is the key's "
            "and the policy's, the same for each of the key's requests (it may use {key_crc32}, "
            "{limit}, {burst}, {window_ms}, {window_s}, {rate_per_s}, {period_s})");
  EXPECT_EQ(error("script: l.lua\nmodel: sliding-log\nwindow_offset: 1s\n"),
            "spec.yaml:3:16: 'window_offset': a window offset shifts aligned windows: "
            "fixed-window's and sliding-counter's, not sliding-log's");
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nresolution: 0s\n"),
            "spec.yaml:3:13: 'resolution' must be a positive duration, e.g. 1s");
  EXPECT_NE(error("script: l.lua\nmodel: gcra\nresolution: often\n").find("spec.yaml:3:13:"),
            std::string::npos);
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nclock: wall\n"),
            "spec.yaml:3:8: unknown clock 'wall' (expected server or client)");
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nargs: {limit: 1}\n"),
            "spec.yaml:3:7: 'args' must be a list of strings");
  EXPECT_NE(error("script: [\n").find("spec.yaml:2:1: not YAML"), std::string::npos);
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nsetup: PING\n"),
            "spec.yaml:3:8: 'setup' must be a list of commands (each a string of words)");
  EXPECT_EQ(error("script: l.lua\nmodel: gcra\nmodel: fixed-window\n"),
            "spec.yaml:3:1: duplicate key 'model' (first at line 2)");
}

}  // namespace
}  // namespace ratelab
