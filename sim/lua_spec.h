// A user's Lua script and its interface in a small YAML file beside it, instead of long flags
// (`ratelab check --lua-spec my_limiter.yaml`; docs/lua-spec.md):
//
//   script: my_limiter.lua                      # the script, relative to this file
//   model: fixed-window                         # the algorithm it implements
//   keys: ["rl:{key}"]                          # KEYS templates (default ["rl:{key}"])
//   args: ["{limit}", "{window_ms}", "{now_ms}"]  # ARGV templates
//   reply: [allowed, remaining]                 # the reply's fields by position
//   decide: "count <= {limit}"                  # optional: the decision over the reply
//
// keys, args and reply may also be one comma-separated string, as the flags take them.
#ifndef RATELAB_SIM_LUA_SPEC_H_
#define RATELAB_SIM_LUA_SPEC_H_

#include <string>

#include "impl/core/status.h"
#include "sim/protocol_under_test.h"

namespace ratelab {

// Reads the spec at `path`. Errors read "FILE:LINE:COLUMN: what is wrong, what was expected".
Result<UserScript> LoadLuaSpec(const std::string& path);
// The same from text; `source` names it in errors, `dir` is where the script's path starts.
Result<UserScript> ParseLuaSpec(const std::string& text, const std::string& source,
                                const std::string& dir);

}  // namespace ratelab

#endif  // RATELAB_SIM_LUA_SPEC_H_
