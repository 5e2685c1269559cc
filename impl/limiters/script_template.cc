#include "impl/limiters/script_template.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "impl/limiters/kv_seed002.h"

namespace ratelab {

namespace {

constexpr std::array<std::string_view, 15> kNames = {
    "key",        "limit",       "burst",        "window_ms",       "window_s",
    "rate_per_s", "period_s",    "cost",         "now_ms",          "now_us",
    "now_s",      "now_s_float", "window_index", "window_start_ms", "window_start_s"};

std::string AllNames() {
  std::string out;
  for (std::string_view n : kNames) out += (out.empty() ? "{" : " {") + std::string(n) + "}";
  return out;
}

bool IsName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  }) && !std::isdigit(static_cast<unsigned char>(s[0]));
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Arithmetic over the names' values, by recursive descent:
//   expr   = term (('+' | '-') term)*
//   term   = factor (('*' | '/') factor)*
//   factor = '-' factor | number | name | function '(' expr (',' expr)* ')' | '(' expr ')'
class Arithmetic {
 public:
  Arithmetic(std::string_view text, const ScriptTemplate::Lookup& lookup)
      : text_(text), lookup_(lookup) {}

  // The value, or the first problem.
  Result<double> Evaluate() {
    const double v = Expr();
    Skip();
    if (error_.empty() && at_ < text_.size())
      Fail("unexpected '" + std::string(1, text_[at_]) + "'");
    if (!error_.empty()) return absl::InvalidArgumentError(error_);
    return v;
  }

 private:
  void Skip() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool Take(char c) {
    Skip();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  double Fail(const std::string& what) {
    if (error_.empty()) error_ = what;
    at_ = text_.size();
    return 0;
  }
  double Expr() {
    double v = Term();
    for (;;) {
      if (Take('+')) {
        v += Term();
      } else if (Take('-')) {
        v -= Term();
      } else {
        return v;
      }
    }
  }
  double Term() {
    double v = Factor();
    for (;;) {
      if (Take('*')) {
        v *= Factor();
      } else if (Take('/')) {
        v /= Factor();
      } else {
        return v;
      }
    }
  }
  double Factor() {
    Skip();
    if (at_ >= text_.size()) return Fail("an expression ends too soon");
    if (Take('-')) return -Factor();
    if (Take('(')) {
      const double v = Expr();
      return Take(')') ? v : Fail("a '(' is not closed");
    }
    const size_t from = at_;
    if (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.') {
      while (at_ < text_.size() &&
             (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) {
        ++at_;
      }
      const std::string number(text_.substr(from, at_ - from));
      char* end = nullptr;
      const double v = std::strtod(number.c_str(), &end);
      return *end == '\0' ? v : Fail("'" + number + "' is not a number");
    }
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) {
      ++at_;
    }
    const std::string_view name = text_.substr(from, at_ - from);
    if (name.empty()) return Fail("unexpected '" + std::string(1, text_[at_]) + "'");
    if (Take('(')) return Function(name);
    if (std::find(kNames.begin(), kNames.end(), name) == kNames.end()) {
      return Fail("unknown name '" + std::string(name) + "'");
    }
    const ScriptTemplate::Value value = lookup_(name);
    if (!std::holds_alternative<double>(value)) {
      return Fail("'" + std::string(name) + "' is text, not a number");
    }
    return std::get<double>(value);
  }
  double Function(std::string_view name) {
    std::vector<double> args = {Expr()};
    while (Take(',')) args.push_back(Expr());
    if (!Take(')')) return Fail("a '(' is not closed");
    const auto one = [&](double (*f)(double)) {
      return args.size() == 1 ? f(args[0]) : Fail(std::string(name) + "() takes one number");
    };
    if (name == "ceil") return one(std::ceil);
    if (name == "floor") return one(std::floor);
    if (name == "round") return one(std::round);
    if (name == "abs") return one(std::fabs);
    if (name == "min") return *std::min_element(args.begin(), args.end());
    if (name == "max") return *std::max_element(args.begin(), args.end());
    return Fail("unknown function '" + std::string(name) +
                "' (expected ceil, floor, round, abs, min or max)");
  }

  std::string_view text_;
  const ScriptTemplate::Lookup& lookup_;
  size_t at_ = 0;
  std::string error_;
};

std::string Write(const ScriptTemplate::Value& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  return JsNumber(std::get<double>(v));
}

}  // namespace

std::span<const std::string_view> ScriptTemplate::Names() { return kNames; }

Result<ScriptTemplate> ScriptTemplate::Parse(std::string_view text) {
  ScriptTemplate t;
  std::string literal;
  const auto where = [&] { return " in '" + std::string(text) + "'"; };
  for (size_t at = 0; at < text.size();) {
    const char c = text[at];
    if ((c == '{' || c == '}') && at + 1 < text.size() && text[at + 1] == c) {
      literal += c;  // {{ or }}
      at += 2;
      continue;
    }
    if (c == '}') return absl::InvalidArgumentError("unmatched '}'" + where());
    if (c != '{') {
      literal += c;
      ++at;
      continue;
    }
    const size_t close = text.find('}', at);
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("unmatched '{'" + where());
    }
    const std::string_view inside = Trim(text.substr(at + 1, close - at - 1));
    if (inside.empty()) return absl::InvalidArgumentError("an empty {}" + where());
    // Checked with stand-in values: a name that is not one, or arithmetic that does not parse.
    const Lookup stand_in = [&t](std::string_view name) -> Value {
      t.names_.emplace_back(name);
      if (name == "key") return std::string("key");
      return 1.0;
    };
    if (IsName(inside)) {
      if (std::find(kNames.begin(), kNames.end(), inside) == kNames.end()) {
        return absl::InvalidArgumentError("unknown placeholder '{" + std::string(inside) + "}'" +
                                          where() + " (expected " + AllNames() + ")");
      }
      t.names_.emplace_back(inside);
    } else if (Result<double> v = Arithmetic(inside, stand_in).Evaluate(); !v.ok()) {
      return absl::InvalidArgumentError("bad expression '{" + std::string(inside) + "}'" + where() +
                                        ": " + std::string(v.status().message()));
    }
    if (!literal.empty()) t.pieces_.push_back({std::exchange(literal, ""), false});
    t.pieces_.push_back({std::string(inside), true});
    at = close + 1;
  }
  if (!literal.empty()) t.pieces_.push_back({literal, false});
  return t;
}

std::string ScriptTemplate::Expand(const Lookup& lookup) const {
  std::string out;
  for (const Piece& p : pieces_) {
    if (!p.placeholder) {
      out += p.text;
    } else if (IsName(p.text)) {
      out += Write(lookup(p.text));
    } else {
      // Parsed once already: it evaluates.
      out += JsNumber(*Arithmetic(p.text, lookup).Evaluate());
    }
  }
  return out;
}

}  // namespace ratelab
