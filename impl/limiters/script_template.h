// The templates of a user script's KEYS and ARGV (kv_user_lua.h): text in which
//   {NAME}        is a value of the request or the policy (the names below),
//   {EXPRESSION}  is arithmetic over those values and numbers: + - * / and parentheses, with
//                 ceil floor round abs min max, e.g. {rate_per_s*1000}, {ceil(burst/rate_per_s)+1},
//                 {(burst-1)*1000}; the result is written as JavaScript would (shortest decimal),
//   {{ and }}     are a literal brace, for a key's own hash tag: "rl:{{{key}}}" -> "rl:{u1}".
//
// Names: key (text; not in arithmetic), key_crc32 (the key's CRC-32, for a library that spreads
// its keys' windows by it), limit, burst, window_ms, window_s, rate_per_s, period_s, cost, now_ms,
// now_us, now_s (whole units since the epoch), now_s_float (fractional seconds, as time.time()
// gives), window_index (floor((now - the key's window offset) / window)), window_start_ms,
// window_start_s (the aligned window's start), request_id (a number no other request of the run
// has, the same in every run of a seed: for a member a library would make unique with a GUID or
// random bytes).
#ifndef RATELAB_IMPL_LIMITERS_SCRIPT_TEMPLATE_H_
#define RATELAB_IMPL_LIMITERS_SCRIPT_TEMPLATE_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "impl/core/status.h"
#include "impl/limiters/expression.h"

namespace ratelab {

class ScriptTemplate {
 public:
  // What a name stands for: text (the key) or a number, with how a lone {NAME} writes it.
  using Value = std::variant<std::string, double>;
  using Lookup = std::function<Value(std::string_view name)>;

  // Reads `text`; InvalidArgument naming what is wrong (an unknown name, an unmatched brace, a
  // bad expression) and where.
  static Result<ScriptTemplate> Parse(std::string_view text);
  // The same, of a template that may use only `names` (of Names()).
  static Result<ScriptTemplate> Parse(std::string_view text,
                                      std::span<const std::string_view> names);

  // The text with every placeholder replaced, `lookup` giving each name's value.
  std::string Expand(const Lookup& lookup) const;
  // The names the template uses.
  const std::vector<std::string>& names() const { return names_; }

  // Whether `text` is a name (letters, digits and _, not starting with a digit).
  static bool IsName(std::string_view text);
  // Every name a template may use, for errors and help.
  static std::span<const std::string_view> Names();

 private:
  struct Piece {
    std::string text;  // literal text, or the placeholder's name or expression
    bool placeholder = false;
    std::optional<Expression> expression;  // for arithmetic
  };
  std::vector<Piece> pieces_;
  std::vector<std::string> names_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_SCRIPT_TEMPLATE_H_
