// A user script's interface (impl/limiters/kv_user_lua.h): the input's lines are --keys, --args,
// --reply and --decide, read as `ratelab check --lua` reads them. What is accepted is expanded
// for a request, as every call of the script expands it.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "fuzz/text.h"
#include "impl/limiters/kv_user_lua.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> lines = ratelab::fuzz::Split(text, '\n', 4, true);
  const auto user =
      ratelab::ParseUserLua("fuzz.lua", "return 1", lines[0], lines[1], lines[2], lines[3]);
  if (!user.ok()) {
    if (user.status().message().empty()) __builtin_trap();
    return 0;
  }
  const ratelab::Policy policy = ratelab::Policy::Window(ratelab::Algorithm::kFixedWindow, 10,
                                                         ratelab::Duration(60'000'000'000));
  const ratelab::Request request{.scope_type = "user",
                                 .scope_value = "u1",
                                 .endpoint = "/api",
                                 .now = ratelab::FromUnixNanos(1'767'225'600'123'456'789)};
  const ratelab::ScriptTemplate::Lookup lookup = [&](std::string_view name) {
    return ratelab::UserScriptValue(name, policy, request, 7);
  };
  for (const ratelab::ScriptTemplate& t : (*user)->keys) (void)t.Expand(lookup);
  for (const ratelab::ScriptTemplate& t : (*user)->args) (void)t.Expand(lookup);
  return 0;
}
