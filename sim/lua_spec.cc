#include "sim/lua_spec.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "impl/limiters/window_offset.h"
#include "sim/internal/scenario_reader.h"

namespace ratelab {

namespace {

class LuaSpecReader : public internal::YamlReader {
 public:
  using YamlReader::YamlReader;

  Result<UserScript> Read(const YAML::Node& root, const std::string& dir) const {
    RL_RETURN_IF_ERROR(NoDuplicateKeys(root));
    RL_RETURN_IF_ERROR(OnlyKeys(root, "a Lua spec",
                                {"script", "model", "keys", "args", "reply", "decide", "clock",
                                 "resolution", "setup", "window_offset"}));
    UserScript s;
    std::string script;
    RL_ASSIGN(script, StringAt(root, "script", true));
    s.path = std::filesystem::path(script).is_absolute()
                 ? script
                 : (std::filesystem::path(dir) / script).string();
    std::string model;
    RL_ASSIGN(model, StringAt(root, "model", true));
    const std::optional<Algorithm> algorithm = AlgorithmNamed(model);
    if (!algorithm) {
      return Error(root["model"],
                   "'" + model + "' is not an algorithm (expected " + AlgorithmChoices() + ")");
    }
    s.model = *algorithm;
    RL_ASSIGN(s.keys, ListAt(root, "keys", s.keys));
    RL_ASSIGN(s.args, ListAt(root, "args", ""));
    RL_ASSIGN(s.reply, ListAt(root, "reply", s.reply));
    RL_ASSIGN(s.decide, StringAt(root, "decide", false));
    if (const YAML::Node setup = root["setup"]) {
      const std::string must = "'setup' must be a list of commands (each a string of words)";
      if (!setup.IsSequence()) return Error(setup, must);
      for (const YAML::Node& command : setup) {
        if (!command.IsScalar()) return Error(command, must);
        s.setup.push_back(command.Scalar());
      }
    }
    if (root["clock"]) {
      std::string clock;
      RL_ASSIGN(clock, StringAt(root, "clock", true));
      Result<DecisionClock> parsed = ParseScriptClock(clock);
      if (!parsed.ok()) return Error(root["clock"], std::string(parsed.status().message()));
      s.clock = *parsed;
    }
    if (root["resolution"]) {
      RL_ASSIGN(s.resolution, DurationAt(root, "resolution", true));
      if (*s.resolution <= Duration(0)) {
        return Error(root["resolution"], "'resolution' must be a positive duration, e.g. 1s");
      }
    }
    if (root["window_offset"]) {
      RL_ASSIGN(s.window_offset, StringAt(root, "window_offset", true));
      // Its names and shape, on a policy of the model's: the run's is not known yet.
      const Policy some{s.model, 1, std::chrono::seconds(1)};
      if (Result<WindowOffset> offset = ParseWindowOffset(s.window_offset, some); !offset.ok()) {
        return Error(root["window_offset"],
                     "'window_offset': " + std::string(offset.status().message()));
      }
    }
    return s;
  }

 private:
  // A list of strings, or one comma-separated string: as the flags take it.
  Result<std::string> ListAt(const YAML::Node& map, const std::string& key,
                             const std::string& fallback) const {
    const YAML::Node n = map[key];
    if (!n) return fallback;
    if (n.IsScalar()) return n.Scalar();
    if (!n.IsSequence()) return Error(n, "'" + key + "' must be a list of strings");
    std::string out;
    for (const YAML::Node& item : n) {
      if (!item.IsScalar()) return Error(item, "'" + key + "' must be a list of strings");
      out += (out.empty() ? "" : ",") + item.Scalar();
    }
    return out;
  }
};

}  // namespace

Result<UserScript> ParseLuaSpec(const std::string& text, const std::string& source,
                                const std::string& dir) {
  return internal::ParseYaml(
      text, source, [&](const YAML::Node& root) { return LuaSpecReader(source).Read(root, dir); });
}

Result<UserScript> LoadLuaSpec(const std::string& path) {
  Result<std::string> text = internal::ReadYamlText(path, kLuaSpec);
  if (!text.ok()) return text.status();
  return ParseLuaSpec(*text, path, std::filesystem::path(path).parent_path().string());
}

}  // namespace ratelab
