// The YAML readers: located errors and typed values (YamlReader), and the scenario reader shared
// by the files that parse the scenario format (scenario_yaml*.cc). Every failure is a Status
// naming source:line:column and what was expected.
#ifndef RATELAB_SIM_INTERNAL_SCENARIO_READER_H_
#define RATELAB_SIM_INTERNAL_SCENARIO_READER_H_

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/input_file.h"
#include "impl/core/status.h"
#include "impl/rules/rules.h"
#include "sim/scenario.h"

namespace ratelab::internal {

#define RL_ASSIGN(lhs, expr)                    \
  do {                                          \
    auto result_ = (expr);                      \
    if (!result_.ok()) return result_.status(); \
    lhs = *std::move(result_);                  \
  } while (0)

#define RL_RETURN_IF_ERROR(expr)       \
  do {                                 \
    Status status_ = (expr);           \
    if (!status_.ok()) return status_; \
  } while (0)

// What every reader of a YAML file of ratelab's needs: errors located at a node, keys checked,
// and typed values read. Every failure names source:line:column and what was expected.
class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  Status Error(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    return absl::InvalidArgumentError(source_ + ":" + std::to_string(m.line + 1) + ":" +
                                      std::to_string(m.column + 1) + ": " + what);
  }

  // Fails on a mapping anywhere in `n` that names a key twice (YAML lets the last one win
  // silently), or whose key is not a plain word.
  Status NoDuplicateKeys(const YAML::Node& n) const {
    if (n.IsSequence()) {
      for (const YAML::Node& item : n) RL_RETURN_IF_ERROR(NoDuplicateKeys(item));
    } else if (n.IsMap()) {
      std::map<std::string, YAML::Mark> seen;
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) return Error(kv.first, "a key must be a plain word");
        const auto [at, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
        if (!fresh) {
          return Error(kv.first, "duplicate key '" + kv.first.Scalar() + "' (first at line " +
                                     std::to_string(at->second.line + 1) + ")");
        }
        RL_RETURN_IF_ERROR(NoDuplicateKeys(kv.second));
      }
    }
    return absl::OkStatus();
  }

  // Fails on any key of `map` not in `allowed`.
  Status OnlyKeys(const YAML::Node& map, const std::string& what,
                  const std::vector<std::string>& allowed) const {
    if (!map.IsMap()) return Error(map, what + " must be a mapping");
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
        return Error(kv.first,
                     "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
      }
    }
    return absl::OkStatus();
  }

  Result<Duration> DurationAt(const YAML::Node& map, const std::string& key, bool required,
                              Duration fallback = Duration(0)) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "' (a duration such as 500ms, 1m30s)");
      return fallback;
    }
    if (!n.IsScalar()) return Error(n, "'" + key + "' must be a duration such as 500ms, 1m30s");
    const std::optional<Duration> d = ParseDuration(n.Scalar());
    if (!d) {
      return Error(n, "'" + key + "' is not a duration: '" + n.Scalar() +
                          "' (expected a number and a unit among h, m, s, ms, us, ns)");
    }
    return *d;
  }

  Result<int64_t> IntAt(const YAML::Node& map, const std::string& key, bool required, int64_t lo,
                        int64_t hi, int64_t fallback = 0) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "' (an integer)");
      return fallback;
    }
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v)) {
      // Digits that do not fit are a number out of range, not a word.
      const std::string text = n.IsScalar() ? n.Scalar() : "";
      const size_t digits = text.starts_with('-') ? 1 : 0;
      if (text.size() > digits &&
          text.find_first_not_of("0123456789", digits) == std::string::npos) {
        return Error(n, "'" + key + "' is too " + (digits == 1 ? "small" : "large") + ": " + text +
                            " (it must be between " + std::to_string(lo) + " and " +
                            std::to_string(hi) + ")");
      }
      return Error(n, "'" + key + "' must be an integer");
    }
    if (v < lo || v > hi) {
      return Error(n, "'" + key + "' must be between " + std::to_string(lo) + " and " +
                          std::to_string(hi) + " (got " + std::to_string(v) + ")");
    }
    return v;
  }

  // What a string may hold besides printable text: nothing (a name, a type, a path: a control
  // character would end a line of a report, a plot or a log), line breaks and tabs (a
  // description), or anything (a value whose own checks come later: a rule's, FindProblem).
  enum class Controls { kNone, kLines, kAny };
  // The string at `key` of `map`; `fallback` when it is missing and not `required`.
  Result<std::string> StringAt(const YAML::Node& map, const std::string& key, bool required,
                               std::string fallback = "",
                               Controls controls = Controls::kNone) const {
    const YAML::Node n = map[key];
    if (!n) {
      if (required) return Error(map, "missing '" + key + "'");
      return fallback;
    }
    if (!n.IsScalar()) return Error(n, "'" + key + "' must be a string");
    for (const char c : n.Scalar()) {
      const auto u = static_cast<unsigned char>(c);
      if ((u >= 0x20 && u != 0x7f) || controls == Controls::kAny) continue;
      if (controls == Controls::kLines && (c == '\n' || c == '\t')) continue;
      return Error(n, "'" + key + "' may not hold " +
                          (c == '\n' ? std::string("a line break")
                                     : "a control character (byte " + std::to_string(u) + ")"));
    }
    return n.Scalar();
  }

  const std::string& source() const { return source_; }
  // `file` as named in the source: relative to the source's directory unless absolute.
  std::string Beside(const std::string& file) const {
    if (file.empty() || file[0] == '/') return file;
    const size_t slash = source_.rfind('/');
    return slash == std::string::npos ? file : source_.substr(0, slash + 1) + file;
  }

 private:
  std::string source_;
};

// The text of the YAML file at `path`, of `kind` (ReadInputFile: a regular file, bounded, UTF-8).
Result<std::string> ReadYamlText(const std::string& path, const InputFileKind& kind);

// The most nodes a document's aliases may make it, counted as a reader walks it (each alias
// as many times as it is used): past it, it is an alias bomb (nine aliases twelve levels deep
// in 655 bytes are billions of nodes). A document without aliases has fewer nodes than bytes,
// so a long one is never refused for its length.
inline constexpr size_t kMostYamlNodes = 1'000'000;

// Where a walk of `root` that expands its aliases passes max(kMostYamlNodes, `bytes`) nodes,
// or none when it does not: the node it was at.
std::optional<YAML::Mark> YamlAliasBomb(const YAML::Node& root, size_t bytes);

// `read(root)` on `text` parsed as YAML; a syntax error reads "SOURCE:LINE:COLUMN: not YAML: ...".
// (yaml-cpp bounds its own recursion: a document nested too deeply is such an error; its
// aliases are bounded here, before anything reads it.)
template <typename Read>
auto ParseYaml(const std::string& text, const std::string& source, Read read)
    -> decltype(read(YAML::Node())) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (const std::optional<YAML::Mark> at = YamlAliasBomb(root, text.size())) {
      return absl::InvalidArgumentError(
          source + ":" + std::to_string(at->line + 1) + ":" + std::to_string(at->column + 1) +
          ": not YAML ratelab reads: its aliases repeat what they name past " +
          std::to_string(std::max(kMostYamlNodes, text.size())) + " nodes (an alias bomb), here");
    }
    return read(root);
  } catch (const YAML::DeepRecursion& e) {
    // (yaml-cpp's own message for it is "bad file".)
    return absl::InvalidArgumentError(
        source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
        ": not YAML ratelab reads: nested " + std::to_string(e.depth()) + " levels deep");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(source + ":" + std::to_string(e.mark.line + 1) + ":" +
                                      std::to_string(e.mark.column + 1) + ": not YAML: " + e.msg);
  }
}

// One rule at `n` (rules_file.h), with `extra_keys` allowed beside a rule's fields, checked; an
// error points at the field at fault.
Result<Rule> ReadRule(const YamlReader& reader, const YAML::Node& n,
                      const std::vector<std::string>& extra_keys = {});
// The rules listed at `list` (rules_file.h), each checked, an error at the field at fault.
Result<RuleSet> ReadRules(const YamlReader& reader, const YAML::Node& list);

class ScenarioReader : public YamlReader {
 public:
  ScenarioReader(std::string source, LimiterProcesses processes)
      : YamlReader(std::move(source)), processes_(processes) {}

  Result<Scenario> Read(const YAML::Node& root);

 private:
  Status ReadNodes(const YAML::Node& n, Scenario& s) const;
  Status ReadLatency(const YAML::Node& n, Scenario& s) const;
  Status ReadLimiter(const YAML::Node& n, Scenario& s) const;
  // A user's limiter process (`exec`), held to the policy `spec` holds: started here, so that a
  // command that cannot start, or that refuses the policy, is an error at its line.
  Status ReadProcess(const YAML::Node& n, LimiterSpec& spec) const;
  LimiterProcesses processes_;
  Status ReadStore(const YAML::Node& n, Scenario& s);
  Status ReadTraffic(const YAML::Node& n, Scenario& s) const;  // scenario_yaml_traffic.cc
  Status ReadReplay(const YAML::Node& n, Scenario& s) const;   // scenario_yaml_traffic.cc
  Status ReadFault(const YAML::Node& n, Scenario& s) const;
  Status ReadRulesSection(const YAML::Node& n, Scenario& s) const;  // scenario_yaml_rules.cc
  // A limiter by the scenario's rules: its protocol must suit every rule.
  Status ReadRulesLimiter(const YAML::Node& n, LimiterSpec& spec, const Scenario& s) const;
  Status ReadChecks(const YAML::Node& n, Scenario& s) const;

  Durability default_durability_ = Durability::kAlways;  // from `store:`, for each limiter
  bool start_given_ = false;                             // the scenario has its own `start:`
};

}  // namespace ratelab::internal

#endif  // RATELAB_SIM_INTERNAL_SCENARIO_READER_H_
