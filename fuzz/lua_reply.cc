// A script's reply, from Lua to a decision: the input's first line is the --reply fields, its
// second the --decide expression (or empty), the rest a Lua script. MemoryKv runs the script
// (EVAL, with a key and the usual ARGV) and turns what it returns into a Redis reply, which is read
// as `ratelab check --lua` reads it (ReadUserReply).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/text.h"
#include "impl/core/clock.h"
#include "impl/limiters/kv_user_lua.h"
#include "impl/store/memory_kv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> parts = ratelab::fuzz::Split(text, '\n', 3, true);
  const auto user =
      ratelab::ParseUserLua("fuzz.lua", std::string(parts[2]), "rl:{key}",
                            "{limit},{window_ms},{now_ms},{cost}", parts[0], parts[1]);
  if (!user.ok()) return 0;
  const ratelab::Instant now = ratelab::FromUnixNanos(1'767'225'600'123'456'789);
  ratelab::ManualClock clock(now);
  ratelab::MemoryKv kv(clock, ratelab::Durability::kAlways, 1'000'000);  // endless loops end soon
  const std::vector<std::string> eval = {"EVAL",  std::string(parts[2]), "1", "rl:user:u1:/a", "10",
                                         "60000", "1767225600123",       "1"};
  const ratelab::Policy policy = ratelab::Policy::Window(ratelab::Algorithm::kFixedWindow, 10,
                                                         ratelab::Duration(60'000'000'000));
  const ratelab::Request request{
      .scope_type = "user", .scope_value = "u1", .endpoint = "/a", .now = now};
  for (int call = 0; call < 2; ++call) {  // the second call sees the state the first left
    const ratelab::Result<ratelab::KvReply> reply = kv.Execute(eval);
    if (!reply.ok()) __builtin_trap();  // MemoryKv is always reachable
    const ratelab::Result<ratelab::Decision> d =
        ratelab::ReadUserReply(**user, *reply, policy, request, 7);
    if (!d.ok() && d.status().message().empty()) __builtin_trap();
  }
  return 0;
}
